"""JUnit XML for GitLab and Jenkins: a test suite per kernel and privilege pass, a
test case per case. A finding (a difference, a refusal, an intermittent case, a
kernel splat, a case a crash cut off) is a failure, with the evidence and any
splat's report; a reproducer's error or a case that never ran an error;
unsupported is skipped; a known failure of the kernel is written as pytest writes
an xfail (`<skipped type="pytest.xfail">`), so CI readers count it as such."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ..programs.catalogue import Catalogue
from ..judge.judgement import Outcome, judged_cases, splats_of
from ..core.model import KernelResult
from .report_input import Format


def _message(verdict: str, why: str, evidence: dict[str, int | str]) -> str:
    """"not-delivered: why [signals=0 ...]": the verdict once (a reason that starts with it is not prefixed
    again), the evidence only when there is some."""
    said = why if why.startswith(f"{verdict}:") or not why else f"{verdict}: {why}"
    shown = " ".join(f"{k}={v}" for k, v in evidence.items())
    return (said or verdict) + (f" [{shown}]" if shown else "")


def _properties(suite: ET.Element, kernel: KernelResult) -> None:
    """What a reader filters a suite by: the kernel, where it came from, the sigwake commit that judged it, and
    whether only some cases ran (--case)."""
    properties = ET.SubElement(suite, "properties")
    named = {"kernel": kernel.kernel_id, "release": kernel.release or "", "origin": kernel.origin.describe(),
             "sigwake_commit": kernel.sigwake_commit, "runner": kernel.runner.mode}
    if kernel.runner.cases:
        named["partial"] = kernel.runner.partial()
    for name, value in named.items():
        ET.SubElement(properties, "property", name=name, value=value)


def render_junit(kernels: list[KernelResult], catalogue: Catalogue) -> str:
    root = ET.Element("testsuites", name="sigwake")
    for kernel in kernels:
        for privilege, cases in judged_cases(kernel, catalogue).items():
            suite = ET.SubElement(root, "testsuite", name=f"{kernel.kernel_id}/{privilege}",
                                  tests=str(len(cases)), timestamp=kernel.recorded_at,
                                  hostname=kernel.runner.mode)
            _properties(suite, kernel)
            counts = {"failures": 0, "errors": 0, "skipped": 0}
            for judged in cases:
                case = judged.case
                element = ET.SubElement(suite, "testcase", name=case.name,
                                        classname=f"sigwake.{kernel.kernel_id}.{privilege}",
                                        time=f"{(case.duration_ms or 0) / 1000:.3f}")
                message = _message(str(case.verdict), judged.why or case.reason, case.evidence)
                if judged.outcome is Outcome.FAIL:
                    reports = "".join(f"\n\n{s.title}:\n{s.report}" for s in splats_of(kernel, case))
                    ET.SubElement(element, "failure", message=message,
                                  type=judged.finding or str(case.verdict)).text = message + reports
                    counts["failures"] += 1
                elif judged.outcome in (Outcome.ERROR, Outcome.MISS):
                    ET.SubElement(element, "error", message=message, type=str(judged.outcome)).text = message
                    counts["errors"] += 1
                elif judged.outcome is Outcome.SKIP:
                    ET.SubElement(element, "skipped", message=judged.why)
                    counts["skipped"] += 1
                elif judged.outcome is Outcome.XFAIL:
                    ET.SubElement(element, "skipped", type="pytest.xfail", message=judged.why)
                    counts["skipped"] += 1
            for key, value in counts.items():
                suite.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


FORMAT = Format("junit", 4, lambda given: {"junit.xml": render_junit(given.kernels, given.catalogue)})
