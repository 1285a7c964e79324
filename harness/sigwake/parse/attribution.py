"""Which case a kernel report belongs to, by what the kernel says: where it stands among the runs' start and
result frames (the guest prints nothing of its own while a program runs) and the task it names (its "Comm:",
which keeps the first 15 bytes of the program's name).

- Printed while a run was in progress (after its start frame, before its result line): that run's.
- Printed after a run's result line, before the next start: the run's if it names the run's program as its
  task (the kernel printed it late, or a task the run left behind did it); otherwise no case's but "between"
  the two (PID 1, the guest's init, runs there, and the kernel's own threads).
- Printed while an upstream selftest ran (after the cases): the selftest's, no case's.
- A run of a whole program (its cases could not be listed) gives its name (judgement.py makes a report under a
  name that is no case's a finding of the kernel's own).
- Before the first run: the boot's.
A reproducer chooses its own comm, so the comm never takes a report from the run in progress.
Where the report and every run carry the kernel log's clock (the guest says each run's start and end on it:
repro/guest/printk_clock.h), "while", "after" and "before" are by that clock, not by console lines: a PREEMPT_RT
kernel prints from a thread of its own, so a report's lines can reach the console after the next run's start.
The taint before and after come with the run it is given to."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, replace

from .ktap import PeerRun, ProgramRun
from ..core.model import Splat

TASK_COMM_LEN = 16  # include/linux/sched.h: a task's comm keeps 15 bytes of the file it exec'd, then NUL


@dataclass(frozen=True)
class _Span:
    start: int
    run: ProgramRun | None = None
    peer: PeerRun | None = None

    def end(self) -> int:
        """Its result line (0: none, it was cut off or is a peer's)."""
        return self.run.console_end if self.run is not None else 0

    def printk_start(self) -> float | None:
        return self.run.printk_start if self.run is not None else self.peer.printk_start if self.peer else None

    def printk_end(self) -> float | None:
        """When it ended on the kernel log's clock (None: not said, or it never ended, or it is a peer's)."""
        return self.run.printk_end if self.run is not None else None

    def words(self) -> str:
        if self.run is not None:
            return f"[{self.run.privilege}] {self.run.case or self.run.program}"
        return f"the upstream selftest {self.peer.program if self.peer else '?'}"


def _comm(program: str) -> str:
    return program[:TASK_COMM_LEN - 1]


def _names(splat: Splat, span: _Span) -> bool:
    """Whether the report names the run's program as its task."""
    comm = splat.task.rsplit("/", 1)[0] if splat.task else ""
    return span.run is not None and bool(comm) and _comm(span.run.program) == comm


def _given(splat: Splat, span: _Span) -> Splat:
    assert span.run is not None
    return replace(splat, privilege=span.run.privilege, case=span.run.case or span.run.program,
                   tainted_before=span.run.tainted_before, tainted_after=span.run.tainted_after)


def _clock(spans: list[_Span]) -> list[float] | None:
    """Every span's start on the kernel log's clock, when every span carries it (and every one that ended, its
    end); else None."""
    times = [s.printk_start() for s in spans]
    if not spans or any(t is None for t in times) or any(s.printk_end() is None and s.end() for s in spans):
        return None
    return [t for t in times if t is not None]


def _position(splat: Splat, spans: list[_Span], times: list[float] | None) -> tuple[int, bool]:
    """The span the report was printed in or after (-1: before the first), and whether while it ran: by the
    kernel log's clock (`times`, _clock()) where the report carries it too, else by console line."""
    if splat.printk_s is not None and times is not None:
        index = bisect.bisect_right(times, splat.printk_s) - 1
        ended = spans[index].printk_end() if index >= 0 else None
        return index, index >= 0 and (ended is None or splat.printk_s <= ended)
    index = bisect.bisect_right([s.start for s in spans], splat.console_line) - 1
    return index, index >= 0 and (not spans[index].end() or splat.console_line <= spans[index].end())


def attribute(found: list[Splat], runs: list[ProgramRun], peers: Sequence[PeerRun] = ()) -> list[Splat]:
    spans = sorted([_Span(r.console_line, run=r) for r in runs if r.console_line] +
                   [_Span(p.console_line, peer=p) for p in peers if p.console_line], key=lambda s: s.start)
    times = _clock(spans)
    attributed = []
    for splat in found:
        index, in_progress = _position(splat, spans, times)
        if index < 0:  # before the first program: the boot itself
            attributed.append(splat)
            continue
        span = spans[index]
        if span.peer is not None:
            attributed.append(replace(splat, place=f"during {span.words()}"))
            continue
        if in_progress or _names(splat, span):
            attributed.append(_given(splat, span))
        else:
            after = spans[index + 1].words() if index + 1 < len(spans) else ""
            place = f"between {span.words()} and {after}" if after else f"after {span.words()}, the last run"
            attributed.append(replace(splat, place=place))
    return attributed
