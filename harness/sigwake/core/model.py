"""The typed model of one run: where each kernel came from and what ran it, its
boot, and each case's result with typed evidence. Made by the parser and the
targets, kept by the store, read by the renderers; it judges nothing."""

from __future__ import annotations

import datetime

import re
from dataclasses import asdict, dataclass, field, replace

from . import debian_names
from .verdicts import Verdict

SCHEMA = 12  # 2: typed evidence (whole numbers are numbers), a typed runner; 3: kernel splats; 4: runner.machine;
# 5: the upstream selftests' results (peers); 6: the boot says whether the kernel started (printed its banner),
# and what the selftests need of the machine (breakpoint, pmu) as probed before they ran; 7: whether the target
# (not the kernel) ended the boot; 8: a report's task, and where one no case's was printed; 9: when the kernel
# printed a report (its log's clock), by which it is placed among the runs; 10: the globs that named the only
# cases run (run --case); 11: a built tree's remote, branch, name and patchset; when the boot and each case's run
# started; 12: when each selftest's program started, and a native run's cases by the machine's own clock

# An evidence value: a count or a flag is a number; anything else (record types, a reason) a string.
Evidence = dict[str, int | str]
NUMBER = re.compile(r"-?\d+")


def evidence_value(text: str) -> int | str:
    return int(text) if NUMBER.fullmatch(text) else text


# Why a case has no verdict of its own when its boot ended: it was running then, or it never ran.
CUT_OFF = "was running when the boot ended"
NEVER_RAN = "never ran"
# Why a run says nothing of the kernel: a line of its report never reached us whole (a lab's log tore it).
LOST_IN_TRANSPORT = "its report lost framed lines on the way"

LOCAL = "local"  # the suite of a Debian origin that is a package file (--kernel FILE.deb), from no archive


@dataclass(frozen=True)
class Origin:
    """Where a kernel came from, as recorded in its result file."""

    kind: str  # "debian", "file" or "host"
    package: str | None = None
    version: str | None = None
    suite: str | None = None
    path: str | None = None
    sha256: str | None = None
    lava_job: str | None = None  # the LAVA job that booted it (--target lava), and its page
    lava_job_url: str | None = None
    git_tree: str | None = None  # an image sigwake built from source: its tree, commit, config and build start
    git_commit: str | None = None
    config: str | None = None
    built_at: str | None = None
    git_url: str | None = None  # a built tree's remote (the URL its branch pulls from), branch, `git describe`,
    git_branch: str | None = None  # and the patches applied, hashed as KCIDB's patchset_hash ("" none applied)
    git_name: str | None = None
    patchset_hash: str | None = None

    def to_json(self) -> dict[str, str]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    def describe(self) -> str:
        """Where it came from, in words: the Debian package, version and suite, or the file."""
        where = f"{self.package} {self.version} ({self.suite})" if self.kind == "debian" else self.path or self.kind
        return f"{where}, LAVA job {self.lava_job}" if self.lava_job else where

    @property
    def flavour(self) -> str | None:
        """generic, cloud, rt or 16k for a Debian kernel package; None for anything else."""
        return debian_names.flavour_of(self.package or "")

    @property
    def arch(self) -> str | None:
        return debian_names.arch_of(self.package or "")

    def in_job(self, job_id: str, job_url: str) -> Origin:
        """The same kernel, as booted by a lab's job."""
        return replace(self, lava_job=job_id, lava_job_url=job_url) if job_id else self


@dataclass(frozen=True)
class Runner:
    """What ran the case loop: the target (its mode), what it ran on, how."""

    mode: str  # "qemu", "lava" (a lab's QEMU device) or "native"
    repeat: int
    machine: str = ""  # what ran it: QEMU and its version, a lab's device type; "" natively
    accel: str = ""  # kvm or tcg
    accel_reason: str = ""
    cpus: int = 0
    memory_mb: int = 0
    skipped_passes: dict[str, str] = field(default_factory=dict)  # pass -> why the target could not run it
    programs: str = ""  # sha256 of the programs that ran (the init, the runner, every reproducer)
    cases: list[str] = field(default_factory=list)  # the only cases run, by name (run --case); []: every case

    def partial(self) -> str:
        """What every report says of a run of some cases only (run --case), so it is never read as a whole one;
        "" for a whole run."""
        named = ", ".join(self.cases) if len(self.cases) <= 4 else f"{len(self.cases)} cases"
        return f"only {named} (--case)" if self.cases else ""


@dataclass
class ReproResult:
    """One reproducer case at one privilege level, over its repeated runs."""

    name: str
    verdict: Verdict
    reason: str = ""
    evidence: Evidence = field(default_factory=dict)  # of the first run (of the rarer outcome when flaky)
    duration_ms: float | None = None  # median milliseconds of the program run that ran it
    privilege: str = "root"  # root, or user-paranoidN: uid 65534 with perf_event_paranoid N
    runs: dict[str, int] = field(default_factory=dict)  # verdict -> how many runs reached it
    kernel_path: Evidence = field(default_factory=dict)  # function -> calls for our events, or why unavailable
    console_span: list[int] = field(default_factory=list)  # [first, last] console line of the run shown
    started_at: str | None = None  # when the run shown started: its boot's start plus the kernel log's clock


@dataclass(frozen=True)
class Splat:
    """A kernel report (WARNING, Oops/BUG, KASAN, UBSAN, lockdep, hung task, RCU stall, panic) read off
    the console, with the case that was running when the kernel printed it."""

    kind: str  # warning, bug, kasan, ubsan, lockdep, hung task, rcu stall, lockup, panic
    title: str  # "WARNING in perf_event_wakeup", as maintainers triage by
    console_line: int  # where it starts in the console log (1-based)
    report: str  # its lines as printed, timestamps dropped
    fatal: bool = False  # it ended in a panic: the boot ended there
    cut: bool = False  # the console ended before the report did
    privilege: str | None = None  # the pass and case it belongs to; None: outside every case
    case: str | None = None
    tainted_before: str = ""  # /proc/sys/kernel/tainted before and after that case ran ("" not known)
    tainted_after: str = ""
    task: str = ""  # the task the report names, "comm/pid" ("": it names none)
    place: str = ""  # outside every case, where: "between [root] a and [root] b", "during the selftest x"
    printk_s: float | None = None  # its first line's timestamp, the kernel log's clock (None: printed without one)

    def where(self) -> str:
        where = f"[{self.privilege}] {self.case}" if self.case else self.place or "outside every case"
        if self.kind in REPORTED_LATE:
            where += f"; a {self.kind} is reported late: it may belong to an earlier case"
        return where


# Kinds of report the kernel prints long after their cause: a hung task after 120 s, an RCU stall after 21 s.
REPORTED_LATE = ("hung task", "rcu stall")


@dataclass(frozen=True)
class PeerResult:
    """One test of an upstream selftest program (tools/testing/selftests/perf_events) as it ran beside the cases."""

    program: str  # watermark_signal, sigtrap_threads, remove_on_exec
    test: str  # as kselftest names it ("global.watermark_signal"); the program's name when it gave no test result
    result: str  # pass, fail, skip, xfail, or error (the program ended without this test's result)
    detail: str = ""  # what it printed for this test (a failed expectation), or how the program ended
    console_line: int = 0  # its result line in the console log (0: none)
    started_at: str | None = None  # when its program started (ISO 8601), where the target gave a clock


@dataclass
class BootRecord:
    status: str  # "ok", "timeout", "boot-failed", or "native" (no boot)
    seconds: float | None = None  # QEMU start (or the runner's start) to exit
    init_uptime_ms: int | None = None  # the guest's uptime when /init started
    detail: str = ""
    rejected_frames: int = 0  # console frames with another token, a bad CRC or a replayed number
    console_tail: str | None = None  # kept when the boot did not end well
    pass_seconds: dict[str, float] = field(default_factory=dict)  # in-target time of each privilege pass
    warnings: list[str] = field(default_factory=list)  # what the guest init warned of
    boots: int = 1  # more than one: a crash or hang ended a boot and the runs after it went on in fresh ones
    kernel_started: bool = False  # it printed its banner: a death before our init is the kernel's, not the target's
    target_failed: str = ""  # the target ended the boots (QEMU killed or stopped from outside): not the kernel's
    started_at: str | None = None  # when the target started the (first) boot, where it says


@dataclass
class KernelResult:
    kernel_id: str
    release: str | None
    origin: Origin
    runner: Runner
    boot: BootRecord
    reproducers: list[ReproResult]
    recorded_at: str
    sigwake_commit: str
    paranoid: dict[str, str] = field(default_factory=dict)  # privilege pass -> perf_event_paranoid
    splats: list[Splat] = field(default_factory=list)  # kernel reports, in console order
    kernel_version: str = ""  # uname -v: how and when it was built ("#1 SMP PREEMPT_DYNAMIC Debian ... (2026-10-12)")
    peers: list[PeerResult] = field(default_factory=list)  # the upstream selftests, when asked for (--peer-selftests)
    machine: dict[str, str] = field(default_factory=dict)  # what they need of the machine: "yes: ..." or "no: ..."
    schema: int = SCHEMA  # the result file's version (harness/sigwake/schemas/kernel-result.v<N>.json)

    def started(self) -> str:
        """When its run began: the boot's start where the target said it, else the time the result was recorded
        less the run's length (the host's native run), else the time it was recorded."""
        if self.boot.started_at:
            return self.boot.started_at
        if self.boot.seconds is not None:
            try:
                ended = datetime.datetime.fromisoformat(self.recorded_at)
            except ValueError:
                return self.recorded_at
            return (ended - datetime.timedelta(seconds=self.boot.seconds)).isoformat(timespec="seconds")
        return self.recorded_at

    def order(self) -> tuple[int, tuple[int, ...], str]:
        """Kernels in version order (the numbers of the release), the host last."""
        numbers = tuple(int(n) for n in re.findall(r"\d+", self.release or self.kernel_id)[:4])
        return (1 if self.runner.mode == "native" else 0, numbers, self.kernel_id)

@dataclass(frozen=True)
class QaStep:
    """One package of a QA line: the headline case's verdict (root) on it."""

    package: str
    version: str
    suite: str
    verdict: str


@dataclass(frozen=True)
class QaBoundary:
    """Where a line's verdict changed: the last package with the old verdict and the first with the new,
    found by bisecting the packages between two steps (or the steps themselves, when it could not)."""

    old: str
    new: str
    last_old: str  # "package version"
    first_new: str
    how: str  # the bisection's summary, or why there was none


@dataclass
class QaLine:
    """One architecture and flavour across the suites, in Debian version order."""

    arch: str
    flavour: str
    steps: list[QaStep] = field(default_factory=list)
    boundaries: list[QaBoundary] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # what could not be tested, and why

    def sentence(self) -> str:
        """'amd64 rt: not-delivered up to P V, delivered from P V' (each verdict run, with its ends)."""
        if not self.steps:
            return f"{self.arch} {self.flavour}: nothing tested"
        parts: list[str] = []
        first = f"{self.steps[0].package} {self.steps[0].version}"
        for boundary in self.boundaries:
            parts.append(f"{boundary.old} up to {boundary.last_old}")
            first = boundary.first_new
        last = self.steps[-1]
        parts.append(f"{last.verdict} from {first}" if self.boundaries else
                     f"{last.verdict} on every package tested ({first} to {last.package} {last.version})")
        return f"{self.arch} {self.flavour}: " + ", ".join(parts)
