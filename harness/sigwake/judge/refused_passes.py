"""A privilege pass the kernel refuses whole (Debian's perf_event_paranoid=3 for an unprivileged user: every
perf_event_open() is EACCES): most of its cases skipped for one reason. Every report says such a pass in one
line per kernel, and lists the pass's other cases (the few that ran) one by one. A pass is refused whole when
one reason of refusal skipped more than half its cases; every skipped case of it is then in that line, each
reason with its count. A skip is never a finding, so nothing a gate counts is folded away."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..core.model import KernelResult
from ..programs.catalogue import Catalogue
from .judgement import Judged, Outcome, judged_cases


@dataclass(frozen=True)
class RefusedPass:
    privilege: str
    skipped: tuple[Judged, ...]  # every case of the pass the kernel refused, whatever the reason
    total: int  # the cases of the pass

    def reasons(self) -> list[tuple[str, int]]:
        return Counter(j.why for j in self.skipped).most_common()

    def line(self) -> str:
        """"[user-paranoid3] refused whole: 69 of 71 cases skipped: perf_event_open: EACCES ... (57); ... (7)"."""
        said = "; ".join(f"{why} ({n})" for why, n in self.reasons())
        return f"[{self.privilege}] refused whole: {len(self.skipped)} of {self.total} cases skipped: {said}"

    def short(self) -> str:
        """The line without its reasons past the first, for a line kept short (KTAP's result line)."""
        (why, n), *others = self.reasons()
        more = f"; and {len(self.skipped) - n} for {len(others)} other reasons" if others else ""
        return f"refused whole: {len(self.skipped)} of {self.total} cases skipped: {why} ({n}){more}"


@dataclass(frozen=True)
class ShownPass:
    """A pass as the reports list it: its refusal in one line, if it was refused whole, and the cases listed
    one by one (all of them when it was not)."""

    privilege: str
    refused: RefusedPass | None
    cases: list[Judged]


def refused_whole(privilege: str, cases: list[Judged]) -> RefusedPass | None:
    skipped = [j for j in cases if j.outcome is Outcome.SKIP]
    if not skipped or 2 * Counter(j.why for j in skipped).most_common(1)[0][1] <= len(cases):
        return None
    return RefusedPass(privilege, tuple(skipped), len(cases))


def shown_passes(kernel: KernelResult, catalogue: Catalogue) -> list[ShownPass]:
    """Every pass of a kernel, in the order recorded, as every report lists it."""
    shown = []
    for privilege, cases in judged_cases(kernel, catalogue).items():
        refused = refused_whole(privilege, cases)
        listed = [j for j in cases if refused is None or j.outcome is not Outcome.SKIP]
        shown.append(ShownPass(privilege, refused, listed))
    return shown
