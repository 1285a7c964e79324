"""Flake control: each case runs several times; the recorded verdict is the
unanimous one, or `flaky` with the count of each outcome."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field

from ..core.model import Evidence, ReproResult
from ..core.verdicts import Verdict


@dataclass(frozen=True)
class CaseRun:
    case: str
    privilege: str
    verdict: Verdict
    reason: str
    evidence: Evidence
    duration_ms: float | None = None
    kernel_path: Evidence = field(default_factory=dict)
    console_span: tuple[int, int] | None = None  # its first and last line in the kernel's console log
    reported: bool = True  # False: made by the harness for a run the guest never finished (a cut-off, a miss)
    left_out: int = 0  # runs of its case the guest left out after it, its first runs having agreed
    torn: bool = False  # its report lost framed lines on the way (a lab's log): no word of the kernel
    started_at: str | None = None  # when it started (ISO 8601), where the target gave a clock


def combine(runs: list[CaseRun], repeat: int | None = None) -> list[ReproResult]:
    """One result per (privilege, case), in the order first seen. With `repeat`, a case the guest reported
    fewer or more times than that, less the runs it left out because the first ones agreed, and no boot cut
    short, is an error: a run lost or one counted twice. A run whose report tore on the way is no verdict: the
    others make the case's when they show what it said; else the case is an error that says why."""
    groups: dict[tuple[str, str], list[CaseRun]] = {}
    for run in runs:
        groups.setdefault((run.privilege, run.case), []).append(run)
    results = []
    for (privilege, case), group in groups.items():
        asked = repeat - sum(r.left_out for r in group) if repeat is not None else None
        reported = len(group)
        torn = [r for r in group if r.torn]
        # A torn run is left out when what is left says what it said: the guest left runs out only after every run
        # it ran had ended alike, and runs that split are a split without it. Else nothing is judged.
        kept = [r for r in group if not r.torn]
        told = any(r.left_out for r in group) or len({str(r.verdict) for r in kept}) > 1
        group = kept if kept and (told or not torn) else torn
        counts = Counter(str(r.verdict) for r in group)
        first = group[0]
        if asked is not None and reported != asked and all(r.reported for r in group) and not torn:
            verdict, reason = Verdict.ERROR, f"{reported} runs reported where {asked} were asked"
        elif len(counts) == 1:
            verdict, reason = first.verdict, first.reason
        else:
            verdict = Verdict.FLAKY
            reason = "runs disagree: " + ", ".join(f"{v} x{n}" for v, n in counts.most_common())
            first = next(r for r in group if str(r.verdict) == counts.most_common()[-1][0])  # the rarer outcome's evidence
        if torn and not first.torn:
            reason += f" ({len(torn)} of {reported} runs left out: {torn[0].reason})"
        elif torn and kept:
            reason += f"; {len(kept)} other run(s) said {kept[0].verdict}, and the guest ran all: this one may not have"
        durations = [r.duration_ms for r in group if r.duration_ms is not None]
        results.append(ReproResult(
            case, verdict, reason, first.evidence,
            round(statistics.median(durations), 2) if durations else None,
            privilege, dict(counts), first.kernel_path, list(first.console_span or ()), first.started_at,
        ))
    return results
