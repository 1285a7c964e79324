"""The few lines `run` ends with: one per kernel (release, origin, boot, the
headline watermark verdict, counts per outcome), then every difference from the
expectations table spelled out, and every flavour that differs from its generic twin. The full matrix stays in the files."""

from __future__ import annotations

from collections import Counter

from .flavours import flavour_findings
from .judgement import Outcome, judged_cases
from .model import KernelResult

HEADLINE = "watermark_sigio"  # rr's case, as root


def render_summary(kernels: list[KernelResult]) -> str:
    lines = []
    differences = []
    for kernel in kernels:
        passes = judged_cases(kernel)
        counts = Counter(str(j.outcome) for cases in passes.values() for j in cases)
        headline = next((j.case.verdict for j in passes.get("root", []) if j.name == HEADLINE), None)
        boot = kernel.boot.status + (f" {kernel.boot.seconds:.1f} s" if kernel.boot.seconds else "")
        tally = ", ".join(f"{counts[str(o)]} {o}" for o in Outcome if counts[str(o)])
        lines.append(f"{kernel.kernel_id}: {kernel.release or '?'} from {kernel.origin.describe()}; {boot}; "
                     f"{HEADLINE} {headline or 'not run'}; {tally}")
        differences += [f"  {kernel.kernel_id} [{j.case.privilege}] {j.name}: {j.why}"
                        for cases in passes.values() for j in cases if j.outcome is Outcome.FAIL]
    lines.append("differences from the expectations table: " + (str(len(differences)) if differences else "none"))
    findings = flavour_findings(kernels)
    if findings:
        differences += [f"flavours that differ from the generic kernel of their version: {len(findings)}"]
        differences += [f"  {finding}" for finding in findings]
    return "\n".join(lines + differences) + "\n"
