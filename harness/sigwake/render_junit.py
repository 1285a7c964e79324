"""JUnit XML for GitLab and Jenkins: a test suite per kernel and privilege pass, a
test case per case. A difference from what is known is a failure, a reproducer's
error or a case the harness could not run an error, each with the evidence in its
message; unsupported is skipped; a known failure of the kernel passes, saying so."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from .judgement import Outcome, judged_cases
from .model import KernelResult


def _evidence(evidence: dict[str, int | str]) -> str:
    return " ".join(f"{k}={v}" for k, v in evidence.items())


def render_junit(kernels: list[KernelResult]) -> str:
    root = ET.Element("testsuites", name="sigwake")
    for kernel in kernels:
        for privilege, cases in judged_cases(kernel).items():
            suite = ET.SubElement(root, "testsuite", name=f"{kernel.kernel_id}/{privilege}",
                                  tests=str(len(cases)), timestamp=kernel.recorded_at,
                                  hostname=kernel.runner.mode)
            counts = {"failures": 0, "errors": 0, "skipped": 0}
            for judged in cases:
                case = judged.case
                element = ET.SubElement(suite, "testcase", name=case.name,
                                        classname=f"sigwake.{kernel.kernel_id}.{privilege}",
                                        time=f"{(case.duration_ms or 0) / 1000:.3f}")
                message = f"{case.verdict}: {judged.why or case.reason} [{_evidence(case.evidence)}]"
                if judged.outcome is Outcome.FAIL:
                    ET.SubElement(element, "failure", message=message, type=str(case.verdict)).text = message
                    counts["failures"] += 1
                elif judged.outcome in (Outcome.ERROR, Outcome.MISS):
                    ET.SubElement(element, "error", message=message, type=str(judged.outcome)).text = message
                    counts["errors"] += 1
                elif judged.outcome is Outcome.SKIP:
                    ET.SubElement(element, "skipped", message=judged.why)
                    counts["skipped"] += 1
                elif judged.outcome is Outcome.XFAIL:
                    ET.SubElement(element, "system-out").text = f"expected failure: {message}"
            for key, value in counts.items():
                suite.set(key, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
