"""Kernel reports read off a console (their kinds and titles: report_kinds.py). Each is found whole, from
its first line to its end, with the console line it starts on, so that the caller can say which case was
running. A report cut off mid-way still counts, with what was read of it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .console import FRAME, PRINTK_STAMP, SPLICED, crc_holds, framed_by_guest
from .report_kinds import FOLLOW_UP, PANIC, Kind, start, task, titled
from ..core.model import Splat

TIMESTAMP = re.compile("^" + PRINTK_STAMP + r"\s?")  # a console line's printk prefix
MAX_LINES = 120  # a report longer than this is cut (its title comes from its first lines)


@dataclass
class _Open:
    kind: Kind
    match: re.Match[str]
    line: int
    lines: list[str]
    printk_s: float | None
    ended: bool = False
    fatal: bool = False
    oopsed: bool = False  # a fault's "Oops:" line has come: another starts a report of its own

    def close(self, cut: bool) -> Splat:
        return Splat(self.kind.name, titled(self.kind, self.match, self.lines), self.line,
                     "\n".join(self.lines[:MAX_LINES]), self.fatal, cut and not self.ended and self.kind.end is not None,
                     task=task(self.lines), printk_s=self.printk_s)


def find(console: str, continued: frozenset[tuple[str, str]] = frozenset()) -> list[Splat]:
    """Every kernel report in a console log, in order (not yet attributed to a case). `continued`: (seconds,
    text) of the lines the guest's init saw the kernel print as the later lines of one record (ktap's
    RunnerReport.continued): a string a process chose, such as an exec'd path, may hold a newline and a report's
    first line, which the console then shows behind the record's own timestamp. Such a line starts no report."""
    found: list[Splat] = []
    continued_texts = {text for _, text in continued}  # a console without printk times: the text alone
    current: _Open | None = None
    since_frame = True  # a framed line came after the last report: a panic then is a report of its own
    for number, raw in enumerate(console.replace("\r", "").split("\n"), start=1):
        frame = FRAME.search(raw)
        if frame is not None and framed_by_guest(raw, frame):  # the guest's framed KTAP: never part of a report
            since_frame = True
            if crc_holds(frame, frame["payload"]):  # the whole line is as the guest framed it: a reproducer's
                continue  # text, whatever kernel report it looks like, never the kernel's
            spliced = SPLICED.search(raw, frame.start("payload"))  # a kernel line printed into the frame
            if spliced is None:
                continue
            raw = raw[spliced.start():]  # the kernel's line, without the frame it landed in
        stamp = TIMESTAMP.match(raw)
        text = raw[stamp.end():] if stamp else raw
        kernels_own = (stamp["seconds"], text) in continued if stamp else text in continued_texts
        started = None if kernels_own else start(text)
        if started is not None and current is not None:
            kind, _ = started
            follows_fault = current.kind.oops_follows and not current.ended and not current.oopsed and \
                FOLLOW_UP.match(text) is not None
            consequence = kind is PANIC and current.kind is not PANIC and not since_frame
            if follows_fault or consequence:
                current.lines.append(text)
                current.oopsed = current.oopsed or follows_fault
                current.fatal = current.fatal or consequence  # the panic's own trace (panic_on_warn) follows
                continue
        if started is not None:
            if current is not None:
                found.append(current.close(cut=False))
            kind, match = started
            current = _Open(kind, match, number, [text], float(stamp["seconds"]) if stamp else None,
                            fatal=kind is PANIC)
            since_frame = False
            continue
        if current is not None and not current.ended:
            current.lines.append(text)
            if current.kind.end is not None and current.kind.end.search(text):
                current.ended = True
    if current is not None:
        found.append(current.close(cut=True))
    return found
