"""The verdict vocabulary. The words and their rules (KTAP result, directive,
exit code, kernel or not) live in repro/protocol.json: the names here are the
handles Python code uses, and tests/test_protocol.py holds them to that file."""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

from .protocol import RULES


class Verdict(str, Enum):
    DELIVERED = "delivered"
    NOT_DELIVERED = "not-delivered"
    MISDELIVERED = "misdelivered"
    NO_WAKEUP = "no-wakeup"
    NO_RECORD = "no-record"
    UNSUPPORTED = "unsupported"
    MEASURED = "measured"
    WRONG_COUNT = "wrong-count"
    ERROR = "error"
    TIMEOUT = "timeout"
    BOOT_FAILED = "boot-failed"
    FLAKY = "flaky"

    @property
    def meaning(self) -> str:
        """What the word says, as every report's legend gives it."""
        return MEANINGS[self]

    def __str__(self) -> str:
        return self.value

    @property
    def is_kernel_verdict(self) -> bool:
        """Says something about the kernel's behaviour, not about the harness or the boot."""
        rule = RULES.get(self.value)
        return rule is not None and rule.kernel

    @property
    def is_ok(self) -> bool:
        """An `ok` KTAP result line (a pass or a skip), as the reproducers print it."""
        rule = RULES.get(self.value)
        return rule is not None and rule.ok


MEANINGS = {
    Verdict.DELIVERED: "the wakeup happened and the signal arrived as promised (poll controls: woke)",
    Verdict.NOT_DELIVERED: "the wakeup happened (record written, POLLIN) but no signal by the deadline",
    Verdict.MISDELIVERED: "a signal came to another thread, with other siginfo, or by another path",
    Verdict.NO_WAKEUP: "records past the watermark, but poll() never reported POLLIN",
    Verdict.NO_RECORD: "the trigger ran, but the kernel wrote no record for it",
    Verdict.UNSUPPORTED: "the kernel refused the setup (a probe or the errno says why)",
    Verdict.MEASURED: "a figure that matches the kernel's documented model",
    Verdict.WRONG_COUNT: "a count (signals, buffers, sizes) that differs from the documented model",
    Verdict.ERROR: "the reproducer itself failed: never a kernel verdict",
    Verdict.TIMEOUT: "the reproducer, or the whole boot, ran past its deadline",
    Verdict.BOOT_FAILED: "the kernel panicked or never ran our init to the end",
    Verdict.FLAKY: "repeated runs disagreed; the result counts the runs of each verdict",
}


def program_exit_code(verdicts: Iterable[Verdict]) -> int:
    """The kselftest exit code a reproducer owes for its cases' verdicts (the rule in
    repro/lib/report.cc): a failure if any case owes one, a skip if every case does, else 0."""
    codes = [RULES[v.value].exit_code for v in verdicts]
    if 1 in codes:
        return 1
    return 4 if codes and all(code == 4 for code in codes) else 0
