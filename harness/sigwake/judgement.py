"""How each recorded case reads against what is known of kernels, the one place the
report formats take it from: a pass, a known failure of this kernel (the
expectations table says so, with its source), a difference from what is known, a
skip, a reproducer's own error, or a case the harness could not run."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from . import expectations
from .model import KernelResult, ReproResult
from .verdicts import Verdict


class Outcome(str, Enum):
    PASS = "pass"  # the behaviour of a kernel with every known fix
    XFAIL = "xfail"  # a known failure of this kernel (e.g. before the fix), as the expectations table says
    FAIL = "fail"  # differs from what is known of this kernel: a regression, or an unexpected fix
    SKIP = "skip"  # the kernel refused the setup (unsupported)
    ERROR = "error"  # the reproducer failed, or its runs disagreed
    MISS = "miss"  # the harness could not run it: the boot failed or timed out

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Judged:
    kernel: KernelResult
    case: ReproResult
    outcome: Outcome
    why: str  # for everything but a plain pass: the reason, the known bug, or the difference

    @property
    def name(self) -> str:
        return self.case.name


def judge(kernel: KernelResult, case: ReproResult) -> Judged:
    verdict = case.verdict
    if verdict is Verdict.UNSUPPORTED:
        return Judged(kernel, case, Outcome.SKIP, case.reason)
    if verdict in (Verdict.BOOT_FAILED, Verdict.TIMEOUT) and kernel.boot.status not in ("ok", "native"):
        return Judged(kernel, case, Outcome.MISS, f"{verdict}: {case.reason}")
    if not verdict.is_kernel_verdict:
        return Judged(kernel, case, Outcome.ERROR, f"{verdict}: {case.reason}")
    mismatch = expectations.check(kernel.kernel_id, kernel.release or "", case.name, verdict, case.evidence,
                                  case.privilege, kernel.origin.kind)
    if mismatch is not None:
        return Judged(kernel, case, Outcome.FAIL, f"{mismatch.kind}: measured {verdict}, expected {mismatch.expected} "
                                                  f"(from: {mismatch.source})")
    known = expectations.expected(case.name, kernel.release or "", case.privilege, kernel.origin.kind)
    correct = expectations.correct(case.name, case.privilege, kernel.origin.kind)
    if known is not None and correct is not None and verdict is not correct:
        return Judged(kernel, case, Outcome.XFAIL, f"{verdict}, as known of this kernel: {known.source}")
    if known is None and not verdict.is_ok:
        return Judged(kernel, case, Outcome.FAIL, f"{verdict} ({case.reason}); nothing is known of this case here")
    return Judged(kernel, case, Outcome.PASS, "")


def judged_cases(kernel: KernelResult) -> dict[str, list[Judged]]:
    """Per privilege pass, in the order recorded, each case judged."""
    passes: dict[str, list[Judged]] = {}
    for case in kernel.reproducers:
        passes.setdefault(case.privilege, []).append(judge(kernel, case))
    return passes
