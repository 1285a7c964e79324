"""The verdict vocabulary, the same words as repro/lib/report.h."""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum


class Verdict(str, Enum):
    DELIVERED = "delivered"          # the wakeup happened and the signal arrived as promised (poll controls: woke)
    NOT_DELIVERED = "not-delivered"  # the wakeup happened (record written, POLLIN) but no signal by the deadline
    MISDELIVERED = "misdelivered"    # a signal came to another thread, with other siginfo, or by another path
    NO_WAKEUP = "no-wakeup"          # records past the watermark, but poll() never reported POLLIN
    NO_RECORD = "no-record"          # the trigger ran, but the kernel wrote no record for it
    UNSUPPORTED = "unsupported"      # the kernel refused the setup (a probe or the errno says why)
    MEASURED = "measured"            # a figure that matches the kernel's documented model
    WRONG_COUNT = "wrong-count"      # a count (signals, buffers) that differs from the documented model
    ERROR = "error"                  # the reproducer itself failed: never a kernel verdict
    TIMEOUT = "timeout"              # the reproducer, or the whole boot, ran past its deadline
    BOOT_FAILED = "boot-failed"      # the kernel panicked or never ran our init to the end
    FLAKY = "flaky"                  # repeated runs disagreed; the evidence counts each outcome

    def __str__(self) -> str:
        return self.value

    @property
    def is_kernel_verdict(self) -> bool:
        """Says something about the kernel's behaviour, not about the harness or the boot."""
        return self not in (Verdict.ERROR, Verdict.TIMEOUT, Verdict.BOOT_FAILED, Verdict.FLAKY)

    @property
    def is_ok(self) -> bool:
        """An `ok` KTAP result line (a pass or a skip), as repro/lib/ktap.cc prints it."""
        return self in (Verdict.DELIVERED, Verdict.UNSUPPORTED, Verdict.MEASURED)


def program_exit_code(verdicts: Iterable[Verdict]) -> int:
    """The kselftest exit code a reproducer owes for its cases' verdicts (repro/lib/report.cc):
    1 if any is not ok, 4 if every one was skipped, else 0."""
    stated = list(verdicts)
    if any(not v.is_ok for v in stated):
        return 1
    return 4 if stated and all(v is Verdict.UNSUPPORTED for v in stated) else 0
