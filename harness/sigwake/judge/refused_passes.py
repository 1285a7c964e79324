"""A privilege pass the kernel refuses whole (Debian's perf_event_paranoid=3 for an unprivileged user: every
perf_event_open() is EACCES): most of its cases skipped for one reason. Every report says such a pass in one
line per kernel (the reason, how many cases, and which but in the summary), and lists its other cases as ever: those
that ran, and those skipped for any other reason (a BPF or capability refusal, too few vCPUs: the machine's).
A pass is refused whole when one reason skipped more than half its cases. Only skips are folded, and a skip is
never a finding, so nothing a gate counts is folded away; the gates read judgement.py, not this."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..core.model import KernelResult
from ..programs.catalogue import Catalogue
from .judgement import Judged, Outcome, judged_cases


@dataclass(frozen=True)
class RefusedPass:
    privilege: str
    why: str  # the one reason
    skipped: tuple[Judged, ...]  # the cases of the pass it skipped
    total: int  # the cases of the pass

    def names(self) -> list[str]:
        return [j.name for j in self.skipped]

    def line(self) -> str:
        """"[user-paranoid3] refused whole: 57 of 71 cases skipped: perf_event_open: EACCES ...", and which."""
        return f"[{self.privilege}] {self.short()} ({', '.join(self.names())})"

    def short(self) -> str:
        """The line without the cases' names, for a line kept short (KTAP's, the summary's)."""
        return f"refused whole: {len(self.skipped)} of {self.total} cases skipped: {self.why}"


@dataclass(frozen=True)
class ShownPass:
    """A pass as the reports list it: its refusal in one line, if it was refused whole, and the cases listed
    one by one (all of them when it was not)."""

    privilege: str
    refused: RefusedPass | None
    cases: list[Judged]


def refused_whole(privilege: str, cases: list[Judged]) -> RefusedPass | None:
    reasons = Counter(j.why for j in cases if j.outcome is Outcome.SKIP)
    if not reasons or 2 * reasons.most_common(1)[0][1] <= len(cases):
        return None
    why = reasons.most_common(1)[0][0]
    return RefusedPass(privilege, why, tuple(j for j in cases if j.outcome is Outcome.SKIP and j.why == why),
                       len(cases))


def shown_passes(kernel: KernelResult, catalogue: Catalogue) -> list[ShownPass]:
    """Every pass of a kernel, in the order recorded, as every report lists it."""
    shown = []
    for privilege, cases in judged_cases(kernel, catalogue).items():
        refused = refused_whole(privilege, cases)
        folded = {id(j) for j in refused.skipped} if refused else set()
        listed = [j for j in cases if id(j) not in folded]
        shown.append(ShownPass(privilege, refused, listed))
    return shown
