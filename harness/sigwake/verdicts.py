"""The verdict vocabulary, the same words as repro/lib/report.h."""

from __future__ import annotations

from enum import Enum


class Verdict(str, Enum):
    DELIVERED = "delivered"          # the signal (for poll controls: the wakeup) arrived
    NOT_DELIVERED = "not-delivered"  # record written and POLLIN reported, but no signal by the deadline
    UNSUPPORTED = "unsupported"      # the kernel rejected the setup; the reason carries errno
    MEASURED = "measured"            # a figure, not pass/fail: the evidence carries it
    ERROR = "error"                  # the reproducer itself failed: never a kernel verdict
    TIMEOUT = "timeout"              # the reproducer, or the whole boot, ran past its deadline
    BOOT_FAILED = "boot-failed"      # the kernel panicked or never ran our init to the end
    FLAKY = "flaky"                  # repeated runs disagreed; the evidence counts each outcome

    def __str__(self) -> str:
        return self.value

    @property
    def is_kernel_verdict(self) -> bool:
        """Says something about the kernel's behaviour, not about the harness or the boot."""
        return self in (Verdict.DELIVERED, Verdict.NOT_DELIVERED, Verdict.UNSUPPORTED, Verdict.MEASURED)

    @property
    def is_ok(self) -> bool:
        """An `ok` KTAP result line (a pass or a skip), as repro/lib/ktap.cc prints it."""
        return self in (Verdict.DELIVERED, Verdict.UNSUPPORTED, Verdict.MEASURED)
