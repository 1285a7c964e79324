"""Known kernel behaviour, with its source. These are facts about kernels that
the measured verdicts are compared against; they never decide a verdict."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .model import Evidence
from .verdicts import Verdict

Version = tuple[int, int]


USER_PASSES = ("user-paranoid1", "user-paranoid2", "user-paranoid3")

HEADLINE = "watermark_sigio"  # rr's case, as root: the verdict each kernel's summary line, the page and QA show

FIX: Version = (6, 10)
FIX_SOURCE = ("fd20bb51ed39 \"perf/ring_buffer: Trigger IO signals for watermark_wakeup\" (v6.10): before it, "
              "perf_output_wakeup() in kernel/events/ring_buffer.c woke poll waiters without setting pending_kill")

# Cases whose signal can only come from the ring buffer's output wakeup (perf_output_wakeup()):
# at a watermark, or (bpf_output_wakeup_events) after wakeup_events samples that are no overflows.
WATERMARK_SIGNAL_CASES = (
    "watermark_sigio", "watermark_sigio_default_signal", "watermark_sigio_process_group", "watermark_threshold",
    "mmap_record_sigio", "setown_ex_tid_watermark",
    "setsig_siginfo_watermark", "set_output_sigio_fasync_on_source", "set_output_sigio_fasync_on_both",
    "inherit_wakeup_watermark", "exactly_once", "bpf_output_sigio", "bpf_output_wakeup_events",
)


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
    *(Expectation(
        case, Verdict.UNSUPPORTED, Verdict.UNSUPPORTED, None,
        "CONFIG_BPF_UNPRIV_DEFAULT_OFF (upstream's default since v5.16, 8a03e56b253e \"bpf: Disallow unprivileged "
        "bpf by default\"; Debian's too) sets kernel.unprivileged_bpf_disabled=2: loading a BPF program needs "
        "CAP_BPF or CAP_SYS_ADMIN (EPERM; the reason names the sysctl's value)",
        privileges=USER_PASSES,
    ) for case in ("bpf_output_sigio", "bpf_output_wakeup_events", "bpf_output_wakeup_events_count",
                   "bpf_output_perf_buffer", "bpf_filter_sigio")),
    Expectation(
        "switch_support_cpu_wide", Verdict.UNSUPPORTED, Verdict.UNSUPPORTED, None,
        "a CPU-wide event needs CAP_PERFMON (or CAP_SYS_ADMIN) unless perf_event_paranoid <= 0: "
        "perf_allow_cpu() in include/linux/perf_event.h, checked by perf_event_open() (EACCES)",
        privileges=USER_PASSES,
    ),
    *(Expectation(
        case, Verdict.NOT_DELIVERED, Verdict.DELIVERED, FIX,
        f"{FIX_SOURCE}; these cases' signals come from that watermark path",
    ) for case in WATERMARK_SIGNAL_CASES),
    Expectation(
        "set_output_sigio_fasync_on_target", Verdict.NOT_DELIVERED, Verdict.NOT_DELIVERED, None,
        "with PERF_EVENT_IOC_SET_OUTPUT the record's writer is handle->event (the source event): "
        "perf_output_wakeup() in kernel/events/ring_buffer.c sets pending_kill on it (since v6.10) and "
        "perf_event_wakeup() signals perf_event_fasync() of that event, so the buffer owner's FASYNC is never used",
    ),
    Expectation(
        "watermark_poll", Verdict.DELIVERED, Verdict.DELIVERED, None,
        "perf_output_wakeup() has set rb->poll and queued the wakeup since PERF_RECORD_SWITCH exists "
        "(45ac1403f564 \"perf: Add PERF_RECORD_SWITCH to indicate context switches\", v4.3); perf_poll() in "
        "kernel/events/core.c takes rb->poll with atomic_xchg(&rb->poll, 0), so a wakeup is reported once",
    ),
    Expectation(
        "watermark_poll_without_ring", Verdict.DELIVERED, Verdict.DELIVERED, None,
        "perf_poll() in kernel/events/core.c starts from EPOLLHUP and only an event's mapped ring (event->rb) "
        "replaces it: an event with no ring reports POLLHUP at once",
    ),
    *(Expectation(
        case, Verdict.DELIVERED, Verdict.DELIVERED, None,
        "__perf_event_overflow() in kernel/events/core.c sets pending_kill = POLL_IN for every sample overflow and "
        "queues the wakeup itself, with no ring-buffer wakeup (these cases' rings never reach their watermark); "
        "F_SETOWN_EX/F_OWNER_TID (Linux 2.6.32, fcntl(2)) directs send_sigio() to one thread, and with F_SETSIG "
        "send_sigio_to_task() in fs/fcntl.c fills si_code, si_band and si_fd; PERF_EVENT_IOC_REFRESH arms "
        "event_limit, whose last overflow sets pending_kill = POLL_HUP and disables the event (perf_event_open(2)); "
        "a sample's group read (PERF_SAMPLE_READ, PERF_FORMAT_GROUP) reads every other member afresh "
        "(perf_output_read_group(), unless the PMU read the group itself: handle->skip_read); a software event "
        "counted where it happens (page faults: perf_sw_event() -> do_perf_sw_event(), inside "
        "perf_swevent_get_recursion_context()) overflows at every sample period the same way",
    ) for case in ("overflow_sigio", "overflow_sigio_refresh", "setown_ex_tid_overflow", "setsig_siginfo_overflow",
                   "overflow_sigio_group_read", "overflow_sigio_page_faults")),
    Expectation(
        "overflow_sigio_refresh_woken", Verdict.DELIVERED, Verdict.DELIVERED, None,
        "at the PERF_EVENT_IOC_REFRESH limit __perf_event_overflow() in kernel/events/core.c sets pending_kill = "
        "POLL_HUP before it writes the sample; that write crossing a 1-byte watermark wakes the ring, and "
        "perf_output_wakeup() in kernel/events/ring_buffer.c sets POLL_IN only when nothing is pending (since "
        "fd20bb51ed39, v6.10; before, it never touched pending_kill): POLLIN and one signal with POLL_HUP",
    ),
    Expectation(
        "watermark_threshold_default", Verdict.DELIVERED, Verdict.DELIVERED, None,
        "with no watermark asked for, ring_buffer_init() in kernel/events/ring_buffer.c sets rb->watermark to half "
        "the data area (max_size / 2), and __perf_output_begin() marks a wakeup when a write takes data_head past it",
    ),
    Expectation(
        "inherit_wakeup_overflow", Verdict.DELIVERED, Verdict.DELIVERED, None,
        "an inherited child event's overflow signals through perf_event_fasync(), which returns the parent event's "
        "fasync list (kernel/events/core.c): the parent's owner gets the signal",
    ),
    Expectation(
        "bpf_output_perf_buffer", Verdict.DELIVERED, Verdict.DELIVERED, None,
        "bpf_perf_event_output() writes through perf_output_begin()/perf_output_end(), whose wakeup has always "
        "woken poll and epoll waiters (libbpf's perf_buffer consumer)",
    ),
    Expectation(
        "bpf_filter_sigio", Verdict.MISDELIVERED, Verdict.NOT_DELIVERED, (6, 10),
        "c4fcc7d1f415 \"perf/bpf: Allow a BPF program to suppress all sample side effects\" (v6.10): "
        "__perf_event_overflow() in kernel/events/core.c runs a PERF_EVENT_IOC_SET_BPF program before it sets "
        "pending_kill, and a program returning 0 ends the overflow there; before, the program replaced only the "
        "overflow handler (the output) and the signal still came",
    ),
    *(Expectation(
        case, Verdict.UNSUPPORTED, Verdict.UNSUPPORTED, None,
        "setresuid() to uids other than one's own needs CAP_SETUID (__sys_setresuid() in kernel/sys.c, EPERM): "
        "only the root pass can make the owners and witnesses of other uids",
        privileges=USER_PASSES,
    ) for case in ("sigio_permission_user_owner", "sigio_permission_root_owner")),
    *(Expectation(
        case, Verdict.DELIVERED, Verdict.DELIVERED, None,
        "send_sigio() in fs/fcntl.c signals only the tasks sigio_perm() allows: fown->euid root, or fown->uid or "
        "fown->euid (the caller's at F_SETOWN, f_modown()) equal to the task's real or saved uid, as kill(2) "
        "allows (fcntl(2)); unchanged since Linux 2.6",
    ) for case in ("sigio_permission_user_owner", "sigio_permission_root_owner")),
    Expectation(
        "bpf_output_wakeup_events_count", Verdict.DELIVERED, Verdict.DELIVERED, None,
        "perf_output_sample() in kernel/events/core.c counts samples in rb->events and, at wakeup_events, takes "
        "wakeup_events back off and marks a wakeup: with 2, every second BPF output sample wakes the ring",
    ),
    Expectation(
        "wakeup_events_nonsample", Verdict.NO_WAKEUP, Verdict.NO_WAKEUP, None,
        "wakeup_events counts samples only: perf_output_sample() in kernel/events/core.c bumps rb->events, "
        "the SWITCH record path does not, and two records stay below the default half-buffer watermark",
    ),
    Expectation(
        "switch_support_task", Verdict.UNSUPPORTED, Verdict.DELIVERED, (4, 3),
        "context_switch and PERF_RECORD_SWITCH arrived with 45ac1403f564 (v4.3)",
    ),
    Expectation(
        "switch_support_cpu_wide", Verdict.UNSUPPORTED, Verdict.DELIVERED, (4, 3),
        "PERF_RECORD_SWITCH_CPU_WIDE arrived with 45ac1403f564 (v4.3)",
    ),
    Expectation(
        "memlock_budget", Verdict.MEASURED, Verdict.MEASURED, None,
        "perf_mmap() in kernel/events/core.c charges perf_event_mlock_kb x online CPUs per user, then "
        "RLIMIT_MEMLOCK per process, and refuses (EPERM) past both without CAP_IPC_LOCK "
        "(Documentation/admin-guide/perf-security.rst): the count equals that accounting's prediction",
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


def correct(repro: str, privilege: str = "root", origin: str = "file") -> Verdict | None:
    """The behaviour of a kernel with every known fix: what a patch should leave or make true."""
    for row in TABLE:
        if row.applies(repro, privilege, origin):
            return row.after
    return None


@dataclass(frozen=True)
class Mismatch:
    kernel: str
    repro: str
    privilege: str
    kind: str  # "unexpected fix", "regression" or "mismatch"
    measured: Verdict
    expected: Verdict
    evidence: Evidence
    source: str

    def __str__(self) -> str:
        shown = " ".join(f"{k}={v}" for k, v in self.evidence.items())
        return (f"{self.kernel}: {self.repro} as {self.privilege} {self.kind}: measured {self.measured}, expected {self.expected} "
                f"[{shown}] (expected from: {self.source})")


def classify(measured: Verdict, wanted: Verdict) -> str:
    if wanted is Verdict.NOT_DELIVERED and measured is Verdict.DELIVERED:
        return "unexpected fix"
    if (wanted in (Verdict.DELIVERED, Verdict.MEASURED, Verdict.NO_WAKEUP) and measured.is_kernel_verdict
            and measured is not Verdict.UNSUPPORTED):
        return "regression"
    return "mismatch"


def check(kernel: str, release: str, repro: str, measured: Verdict, evidence: Evidence,
          privilege: str = "root", origin: str = "debian") -> Mismatch | None:
    """None when the measured verdict is the known behaviour (or nothing is known)."""
    want = expected(repro, release, privilege, origin)
    if want is None or want.verdict is measured:
        return None
    return Mismatch(kernel, repro, privilege, classify(measured, want.verdict), measured, want.verdict, evidence,
                    want.source)
