"""Which case was running when the kernel printed a report: the last run whose
start frame stands before the report's first line in the console log (the
guest writes nothing while a program runs, so a report printed during a run
lands after its start frame), with the taint before and after that run."""

from __future__ import annotations

import bisect
from dataclasses import replace

from .ktap import ProgramRun
from ..core.model import Splat


def attribute(found: list[Splat], runs: list[ProgramRun]) -> list[Splat]:
    located = [run for run in runs if run.console_line]
    starts = [run.console_line for run in located]
    attributed = []
    for splat in found:
        index = bisect.bisect_right(starts, splat.console_line) - 1
        if index < 0:  # before the first program: the boot itself
            attributed.append(splat)
            continue
        run = located[index]
        attributed.append(replace(splat, privilege=run.privilege, case=run.case or run.program,
                                  tainted_before=run.tainted_before, tainted_after=run.tainted_after))
    return attributed
