"""JUnit XML for GitLab and Jenkins: a test suite per kernel and privilege pass, a
test case per case. A finding (a difference, a refusal, an intermittent case, a
kernel splat, a case a crash cut off or lost) is a failure, with the evidence and
any splat's report; a reproducer's error, or a case the target never ran, an error;
unsupported is skipped; a known failure of the kernel is written as pytest writes
an xfail (`<skipped type="pytest.xfail">`), so CI readers count it as such. A pass
the kernel refused whole is one skipped test case, "refused whole", that says how
many cases and why (refused_passes.py). Each kernel's own suite has its boot (the host's
running kernel, which nothing booted: its run) and a failure per finding beside its cases; a
result file that could not be read is an error. A test case's time is its run's,
where known; a pass's suite's the time the pass took in the target, its timestamp
its first run's start."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ..programs.catalogue import Catalogue
from ..judge.judgement import (BOOT_ENDINGS, Finding, Judged, Outcome, beside_cases, flavour_differences, splats_of,
                               untested, whole_run)
from ..judge.refused_passes import shown_passes
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


def kernel_suite(root: ET.Element, kernel: KernelResult, found: list[Finding]) -> None:
    """The kernel's own suite: its boot (an error when it could not be tested, a failure when it crashed or hung)
    and a failure per finding of the kernel beside its cases (a report outside every case, a flavour, a peer),
    so a reader counts every finding the summary counts."""
    suite = ET.SubElement(root, "testsuite", name=f"{kernel.kernel_id}/kernel", timestamp=kernel.started(),
                          hostname=kernel.runner.mode)
    _properties(suite, kernel)
    ended = [f for f in found if f.kind in BOOT_ENDINGS]
    why = untested(kernel)
    boot = ET.SubElement(suite, "testcase", name=whole_run(kernel), classname=f"sigwake.{kernel.kernel_id}")
    if kernel.boot.seconds is not None:
        boot.set("time", f"{kernel.boot.seconds:.3f}")
    if why is not None:
        ET.SubElement(boot, "error", message=why, type="not tested").text = why
    elif ended:
        ET.SubElement(boot, "failure", message=f"{ended[0].kind}: {ended[0].text}", type=ended[0].kind).text = \
            "\n".join(f"{f.kind}: {f.text}" for f in ended)
    others = [f for f in found if f.kind not in BOOT_ENDINGS]
    for number, finding in enumerate(others, start=1):
        element = ET.SubElement(suite, "testcase", name=f"{finding.kind} {number}", classname=f"sigwake.{kernel.kernel_id}")
        ET.SubElement(element, "failure", message=f"{finding.kind}: {finding.text}", type=finding.kind).text = finding.text
    suite.set("tests", str(1 + len(others)))
    suite.set("failures", str(len(others) + (1 if ended and why is None else 0)))
    suite.set("errors", str(1 if why is not None else 0))
    suite.set("skipped", "0")


def _case(suite: ET.Element, kernel: KernelResult, judged: Judged, counts: dict[str, int]) -> None:
    case = judged.case
    element = ET.SubElement(suite, "testcase", name=case.name, classname=f"sigwake.{kernel.kernel_id}.{case.privilege}")
    if case.duration_ms is not None:  # a case a crash cut off has no time of its own
        element.set("time", f"{case.duration_ms / 1000:.3f}")
    message = _message(str(case.verdict), judged.why or case.reason, case.evidence)
    # the kernel's findings (a case a crash lost among them) are failures, said as the finding; the reproducer's
    # own error stays an error (a finding too, of the test's, not the kernel's)
    if judged.outcome is Outcome.FAIL or (judged.finding is not None and judged.outcome is Outcome.MISS):
        message = f"{judged.finding or 'finding'}: {message}"
        reports = "".join(f"\n\n{s.title}:\n{s.report}" for s in splats_of(kernel, case))
        ET.SubElement(element, "failure", message=message, type=judged.finding or str(case.verdict)).text = \
            message + reports
        counts["failures"] += 1
    elif judged.outcome in (Outcome.ERROR, Outcome.MISS):  # not judged, and no finding: the target's doing
        ET.SubElement(element, "error", message=message, type=str(judged.outcome)).text = message
        counts["errors"] += 1
    elif judged.outcome is Outcome.SKIP:
        ET.SubElement(element, "skipped", message=judged.why)
        counts["skipped"] += 1
    elif judged.outcome is Outcome.XFAIL:
        ET.SubElement(element, "skipped", type="pytest.xfail", message=judged.why)
        counts["skipped"] += 1


def render_junit(kernels: list[KernelResult], catalogue: Catalogue, unreadable: list[str] | None = None) -> str:
    """`unreadable`: stored result files that could not be read, each an error (a kernel nobody judged)."""
    root = ET.Element("testsuites", name="sigwake")
    if unreadable:
        suite = ET.SubElement(root, "testsuite", name="unreadable results", tests=str(len(unreadable)),
                              failures="0", errors=str(len(unreadable)), skipped="0")
        for number, why in enumerate(unreadable, start=1):
            element = ET.SubElement(suite, "testcase", name=f"result file {number}", classname="sigwake.results")
            ET.SubElement(element, "error", message=why, type="unreadable").text = why
    flavours = flavour_differences(kernels)
    for kernel in kernels:
        kernel_suite(root, kernel, beside_cases(kernel, catalogue, flavours))
        for shown in shown_passes(kernel, catalogue):
            # the pass's own start where its runs have one (its first run's), else the kernel's
            starts = [j.case.started_at for j in (*shown.cases, *(shown.refused.skipped if shown.refused else ()))
                      if j.case.started_at]
            suite = ET.SubElement(root, "testsuite", name=f"{kernel.kernel_id}/{shown.privilege}",
                                  tests=str(len(shown.cases) + (1 if shown.refused else 0)),
                                  timestamp=min(starts) if starts else kernel.started(), hostname=kernel.runner.mode)
            if (seconds := kernel.boot.pass_seconds.get(shown.privilege)) is not None:
                suite.set("time", f"{seconds:.3f}")
            _properties(suite, kernel)
            counts = {"failures": 0, "errors": 0, "skipped": 0}
            if shown.refused is not None:
                element = ET.SubElement(suite, "testcase", name="refused whole",
                                        classname=f"sigwake.{kernel.kernel_id}.{shown.privilege}")
                ET.SubElement(element, "skipped", message=shown.refused.line())
                counts["skipped"] += 1
            for judged in shown.cases:
                _case(suite, kernel, judged, counts)
            for key, value in counts.items():
                suite.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


FORMAT = Format("junit", 4, lambda given: {"junit.xml": render_junit(given.kernels, given.catalogue, given.unreadable)})
