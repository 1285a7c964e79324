"""The exit codes of run, qa, validate-patch and bisect, the one rule a CI job,
a bisection script or a maintainer gates on (README "Exit codes"):

  0   no finding: every kernel tested, nothing differs from what is known
  1   a finding: a difference, a regression, a splat, a crash or hang, an intermittent case, a lost case
  2   usage: the command line is wrong
  3   could not test: a kernel could not be fetched, built or booted (the target's doing, not the kernel's)
  130 interrupted (what finished is kept)

A finding wins over what could not be tested: what was tested is already a reason to stop."""

from __future__ import annotations

NO_FINDING = 0
FINDING = 1
USAGE = 2
COULD_NOT_TEST = 3
INTERRUPTED = 130


def exit_code(findings: int, untested: int) -> int:
    return FINDING if findings else COULD_NOT_TEST if untested else NO_FINDING
