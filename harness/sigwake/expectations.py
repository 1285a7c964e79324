"""Known kernel behaviour, with its source. These are facts about kernels that
the measured verdicts are compared against; they never decide a verdict."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .verdicts import Verdict

Version = tuple[int, int]


USER_PASSES = ("user-paranoid1", "user-paranoid2", "user-paranoid3")


@dataclass(frozen=True)
class Expectation:
    repro: str  # a reproducer case, or "*" for every case
    before: Verdict  # on kernels older than `since`
    after: Verdict  # from `since` on
    since: Version | None  # None: the same on every kernel
    source: str
    privileges: tuple[str, ...] | None = None  # the passes it speaks of; None: every pass
    origins: tuple[str, ...] | None = None  # the kernel origins it speaks of (debian, file, host); None: all

    def applies(self, repro: str, privilege: str, origin: str) -> bool:
        return (self.repro in ("*", repro)
                and (self.privileges is None or privilege in self.privileges)
                and (self.origins is None or origin in self.origins))


# The first row that applies decides: narrower rows (a privilege, an origin) come first.
TABLE: tuple[Expectation, ...] = (
    Expectation(
        "*", Verdict.UNSUPPORTED, Verdict.UNSUPPORTED, None,
        "Debian's kernels carry the security-perf-allow-further-restriction patch: at perf_event_paranoid 3 "
        "(Debian's default) perf_event_open() refuses every user without CAP_PERFMON/CAP_SYS_ADMIN (EACCES)",
        privileges=("user-paranoid3",), origins=("debian",),
    ),
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


def expected(repro: str, release: str, privilege: str = "root", origin: str = "debian") -> Expected | None:
    version = upstream_version(release)
    for row in TABLE:
        if row.applies(repro, privilege, origin):
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
    privilege: str
    kind: str  # "unexpected fix", "regression" or "mismatch"
    measured: Verdict
    expected: Verdict
    evidence: dict[str, str]
    source: str

    def __str__(self) -> str:
        shown = " ".join(f"{k}={v}" for k, v in self.evidence.items())
        return (f"{self.kernel}: {self.repro} as {self.privilege} {self.kind}: measured {self.measured}, expected {self.expected} "
                f"[{shown}] (expected from: {self.source})")


def classify(measured: Verdict, wanted: Verdict) -> str:
    if wanted is Verdict.NOT_DELIVERED and measured is Verdict.DELIVERED:
        return "unexpected fix"
    if wanted is Verdict.DELIVERED and measured is Verdict.NOT_DELIVERED:
        return "regression"
    return "mismatch"


def check(kernel: str, release: str, repro: str, measured: Verdict, evidence: dict[str, str],
          privilege: str = "root", origin: str = "debian") -> Mismatch | None:
    """None when the measured verdict is the known behaviour (or nothing is known)."""
    want = expected(repro, release, privilege, origin)
    if want is None or want.verdict is measured:
        return None
    return Mismatch(kernel, repro, privilege, classify(measured, want.verdict), measured, want.verdict, evidence,
                    want.source)
