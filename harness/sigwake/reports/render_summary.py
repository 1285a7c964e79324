"""The lines `run` and `qa` end with: every finding first, then one line per
kernel in version order (its id, where it came from, its boot, the headline
watermark verdict, counts per outcome), then what could not be tested, and last
the count of findings by kind, never "none" when something was found."""

from __future__ import annotations

from collections import Counter

from ..programs.catalogue import Catalogue
from ..judge.expectations import HEADLINE
from ..judge.gate import of_run
from ..judge.judgement import Outcome, judged_cases, shown
from ..core.model import KernelResult
from .report_input import Format, ReportInput


def kernel_line(kernel: KernelResult, catalogue: Catalogue) -> str:
    passes = judged_cases(kernel, catalogue)
    counts = Counter(str(j.outcome) for cases in passes.values() for j in cases)
    headline = next((j.case.verdict for j in passes.get("root", []) if j.name == HEADLINE), None)
    boot = kernel.boot.status + (f" {kernel.boot.seconds:.1f} s" if kernel.boot.seconds else "")
    release = f" ({kernel.release or 'release unknown'})" if kernel.release != kernel.kernel_id else ""
    tally = ", ".join(f"{counts[str(o)]} {o}" for o in Outcome if counts[str(o)])
    return (f"{kernel.kernel_id}{release} from {kernel.origin.describe()}; {boot}; "
            f"{HEADLINE} {headline or 'not run'}; {tally}")


def render_summary(kernels: list[KernelResult], catalogue: Catalogue, not_tested: list[str] | None = None) -> str:
    """`not_tested`: kernels that never got as far as a result (could not be fetched or built)."""
    ordered = sorted(kernels, key=KernelResult.order)
    gate = of_run(ordered, catalogue, not_tested)
    lines = [f"finding: {line}" for line in shown(gate.findings, ordered)]
    lines += [kernel_line(k, catalogue) for k in ordered]
    lines += [f"not tested: {why}" for why in gate.untested]
    lines.append(gate.last_line())
    return "\n".join(lines) + "\n"


def _summary(given: ReportInput) -> dict[str, str]:
    return {"": render_summary(given.kernels, given.catalogue) + "".join(f"unreadable: {u}\n" for u in given.unreadable)}


FORMAT = Format("summary", 1, _summary)
