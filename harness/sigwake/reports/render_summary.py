"""The lines `run` and `qa` end with: every finding first, then one line per
kernel in version order (its id, where it came from, its boot, the headline
watermark verdict, counts per outcome), then what could not be tested, and last
the count of findings by kind, never "none" when something was found."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..programs.catalogue import Catalogue
from ..judge.expectations import HEADLINE
from ..judge.gate import of_run, unread
from ..judge.judgement import Outcome, judged_cases, shown
from ..judge.refused_passes import shown_passes
from ..core.model import KernelResult
from .report_input import Format, ReportInput


@dataclass(frozen=True)
class KernelSummary:
    """A kernel's line of the summary, as --json gives it."""

    kernel: str
    release: str
    origin: str
    boot: str
    boot_seconds: float
    headline: str  # the watermark verdict as root, or "not run"
    outcomes: dict[str, int]  # outcome -> cases
    only: str  # Runner.partial(): which cases alone ran (--case); "": every case
    refused: list[str]  # each pass the kernel refused whole: "user-paranoid3 (57 of 71 cases: <why>)"

    def line(self) -> str:
        release = f" ({self.release or 'release unknown'})" if self.release != self.kernel else ""
        boot = self.boot + (f" {self.boot_seconds:.1f} s" if self.boot_seconds else "")
        tally = ", ".join(f"{n} {o}" for o, n in self.outcomes.items())
        only = f"; {self.only}" if self.only else ""
        refused = "".join(f"; refused whole: {r}" for r in self.refused)
        return f"{self.kernel}{release} from {self.origin}; {boot}; {HEADLINE} {self.headline}; {tally}{refused}{only}"


def kernel_summary(kernel: KernelResult, catalogue: Catalogue) -> KernelSummary:
    passes = judged_cases(kernel, catalogue)
    counts = Counter(str(j.outcome) for cases in passes.values() for j in cases)
    headline = next((j.case.verdict for j in passes.get("root", []) if j.name == HEADLINE), None)
    return KernelSummary(kernel.kernel_id, kernel.release or "", kernel.origin.describe(), kernel.boot.status,
                         kernel.boot.seconds or 0.0, headline or "not run",
                         {str(o): counts[str(o)] for o in Outcome if counts[str(o)]}, kernel.runner.partial(),
                         [f"{p.privilege} ({len(p.refused.skipped)} of {p.refused.total} cases: {p.refused.why})"
                          for p in shown_passes(kernel, catalogue) if p.refused is not None])


def render_summary(kernels: list[KernelResult], catalogue: Catalogue, not_tested: list[str] | None = None) -> str:
    """`not_tested`: kernels that never got as far as a result (could not be fetched or built), and stored
    results that could not be read."""
    ordered = sorted(kernels, key=KernelResult.order)
    gate = of_run(ordered, catalogue, not_tested)
    lines = [f"finding: {line}" for line in shown(gate.findings, ordered)]
    lines += [kernel_summary(k, catalogue).line() for k in ordered]
    lines += [f"not tested: {why}" for why in gate.untested]
    lines.append(gate.last_line())
    return "\n".join(lines) + "\n"


def _summary(given: ReportInput) -> dict[str, str]:
    return {"": render_summary(given.kernels, given.catalogue, unread(given.unreadable))}


FORMAT = Format("summary", 1, _summary)
