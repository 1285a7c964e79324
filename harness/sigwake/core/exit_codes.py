"""The exit codes of every command, the one rule a CI job, a bisection script or a maintainer gates on
(README "Exit codes"; each command's --help lists those it can end with). A finding wins over what could not
be tested: what was tested is already a reason to stop."""

from __future__ import annotations

NO_FINDING = 0
FINDING = 1
USAGE = 2
COULD_NOT_TEST = 3
INTERRUPTED = 130

# What each code says, as the gates (run, qa, validate-patch, bisect) mean it.
MEANING = {
    NO_FINDING: "no finding: everything asked was tested and nothing differs from what is known",
    FINDING: "a finding: a difference, a regression, a splat, a crash or hang, an intermittent case, a lost case",
    USAGE: "usage: the command line is wrong, or a patch does not apply",
    COULD_NOT_TEST: "could not test: a kernel could not be fetched, built or booted (the target's doing, not the "
                    "kernel's)",
    INTERRUPTED: "interrupted (what finished is kept)",
}
# What the commands that judge nothing (build, report, lava-jobs) end with.
TOOL_MEANING = {
    NO_FINDING: "done",
    USAGE: MEANING[USAGE],
    COULD_NOT_TEST: "could not: a kernel or package could not be fetched or built, there are no results, or a "
                    "stored result could not be read",
    INTERRUPTED: MEANING[INTERRUPTED],
}


def exit_code(findings: int, untested: int) -> int:
    return FINDING if findings else COULD_NOT_TEST if untested else NO_FINDING
