"""Known kernel behaviour, with its source. These are facts about kernels that
the measured verdicts are compared against; they never decide a verdict."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .verdicts import Verdict

Version = tuple[int, int]


@dataclass(frozen=True)
class Expectation:
    repro: str
    before: Verdict  # on kernels older than `since`
    after: Verdict  # from `since` on
    since: Version | None  # None: the same on every kernel
    source: str


TABLE: tuple[Expectation, ...] = (
    Expectation(
        "watermark_sigio", Verdict.NOT_DELIVERED, Verdict.DELIVERED, (6, 10),
        "fd20bb51ed39 \"perf/ring_buffer: Trigger IO signals for watermark_wakeup\" (v6.10): before it, "
        "perf_output_wakeup() in kernel/events/ring_buffer.c woke poll waiters without setting pending_kill",
    ),
    Expectation(
        "watermark_poll", Verdict.DELIVERED, Verdict.DELIVERED, None,
        "perf_output_wakeup() has set rb->poll and queued the wakeup since PERF_RECORD_SWITCH exists "
        "(45ac1403f564 \"perf: Add PERF_RECORD_SWITCH to indicate context switches\", v4.3)",
    ),
    Expectation(
        "overflow_sigio", Verdict.DELIVERED, Verdict.DELIVERED, None,
        "__perf_event_overflow() in kernel/events/core.c sets pending_kill = POLL_IN for every sample overflow",
    ),
)


def upstream_version(release: str) -> Version | None:
    """The upstream major.minor in a `uname -r` (Debian's 6.1.0-57-amd64 is 6.1)."""
    match = re.match(r"(\d+)\.(\d+)", release)
    return (int(match[1]), int(match[2])) if match else None


@dataclass(frozen=True)
class Expected:
    verdict: Verdict
    source: str


def expected(repro: str, release: str) -> Expected | None:
    version = upstream_version(release)
    for row in TABLE:
        if row.repro == repro:
            if row.since is None:
                return Expected(row.after, row.source)
            if version is None:
                return None
            return Expected(row.after if version >= row.since else row.before, row.source)
    return None


@dataclass(frozen=True)
class Mismatch:
    kernel: str
    repro: str
    kind: str  # "unexpected fix", "regression" or "mismatch"
    measured: Verdict
    expected: Verdict
    evidence: dict[str, str]
    source: str

    def __str__(self) -> str:
        shown = " ".join(f"{k}={v}" for k, v in self.evidence.items())
        return (f"{self.kernel}: {self.repro} {self.kind}: measured {self.measured}, expected {self.expected} "
                f"[{shown}] (expected from: {self.source})")


def classify(measured: Verdict, wanted: Verdict) -> str:
    if wanted is Verdict.NOT_DELIVERED and measured is Verdict.DELIVERED:
        return "unexpected fix"
    if wanted is Verdict.DELIVERED and measured is Verdict.NOT_DELIVERED:
        return "regression"
    return "mismatch"


def check(kernel: str, release: str, repro: str, measured: Verdict, evidence: dict[str, str]) -> Mismatch | None:
    """None when the measured verdict is the known behaviour (or nothing is known)."""
    want = expected(repro, release)
    if want is None or want.verdict is measured:
        return None
    return Mismatch(kernel, repro, classify(measured, want.verdict), measured, want.verdict, evidence, want.source)
