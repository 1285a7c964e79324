"""Kernel reports read off a console: a WARNING, an Oops or BUG, KASAN, UBSAN,
lockdep, a hung task, an RCU stall, a soft lockup, a panic. Each gets a one-line
title in the form kernel maintainers (and syzbot) triage by, "WARNING in
perf_event_wakeup", "BUG: unable to handle page fault in kmem_cache_alloc_noprof",
and the console line it starts on, so that the caller can say which case was
running. A report cut off mid-way still counts, with what was read of it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .console import FRAME, SPLICED, crc_holds
from ..core.model import Splat

TIMESTAMP = re.compile(r"^\[\s*\d+\.\d+\]\s?")  # printk's "[    5.960677] "
END_TRACE = re.compile(r"---\[ end (trace|Kernel panic)")  # how a WARNING, an Oops or a panic ends
END_KASAN = re.compile(r"^={20,}")
MAX_LINES = 120  # a report longer than this is cut (its title comes from its first lines)

# A kernel function in a backtrace line (" ? func+0x1c/0x30" is unreliable: '?' frames are left out).
TRACE_FRAME = re.compile(r"^\s*(?P<unreliable>\? )?(?P<func>[A-Za-z_][\w.]*)\+0x[0-9a-f]+/0x[0-9a-f]+")
RIP = re.compile(r"(?:RIP: 0010:|pc : )(?P<func>[A-Za-z_][\w.]*)\+0x")
# Where the report machinery itself sits in a backtrace: never the guilty function.
NOT_GUILTY = re.compile(
    r"^(dump_stack\w*|show_stack|__warn\w*|warn_\w+|report_bug|handle_bug|exc_invalid_op|asm_exc_\w+|"
    r"__report_\w+|print_\w+|panic|printk\w*|_printk|vprintk\w*|kasan_\w+|__kasan_\w+|__asan_\w+|"
    r"ubsan_\w+|__ubsan_\w+|lock_acquire\w*|lock_release|__lock_acquire|lockdep_\w+|check_\w+|validate_chain|"
    r"register_lock_class|mark_lock\w*|mark_usage|"
    r"__schedule|schedule\w*|io_schedule\w*|preempt_schedule\w*|wait_for_\w+|__wait_for_\w+|"
    r"mutex_lock\w*|__mutex_lock\w*|down_\w+|rwsem_\w+|_raw_spin_\w+|rcu_\w+|__rcu_\w+|"
    r"sysvec_\w+|asm_sysvec_\w+|__sysvec_\w+|irq_exit\w*|__irq_exit\w*|handle_softirqs|__do_softirq|"
    r"tick_\w+|update_process_times|hrtimer_\w+|__hrtimer_\w+|watchdog_\w+|kthread|ret_from_fork\w*|"
    r"entry_SYSCALL_\w+|do_syscall_\w+|x64_sys_call|el0_\w+|el1_\w+|invoke_syscall|do_el0_svc)$")


def _clean(func: str) -> str:
    """perf_event_wakeup.constprop.0 -> perf_event_wakeup (a compiler's clone is the same function)."""
    return re.sub(r"\.(constprop|isra|part|cold|llvm)(\.\d+)?", "", func)


@dataclass(frozen=True)
class Kind:
    name: str  # what the report is: warning, bug, kasan, ubsan, lockdep, hung task, rcu stall, lockup, panic
    start: re.Pattern[str]
    title: Callable[[re.Match[str], list[str]], str]  # from the start line and the report's lines
    end: re.Pattern[str] | None = END_TRACE  # its last line; None: it has none (hung task, stall, lockdep)


def guilty(lines: list[str]) -> str:
    """The first reliable backtrace frame that is not the report machinery's, or "?"."""
    for line in lines:
        frame = TRACE_FRAME.match(line)
        if frame and not frame["unreliable"] and not NOT_GUILTY.match(_clean(frame["func"])):
            return _clean(frame["func"])
    return "?"


def faulting(lines: list[str]) -> str:
    """Where the CPU was: the kernel-mode RIP (x86) or pc (arm64), else the guilty frame."""
    for line in lines:
        if (rip := RIP.search(line)) is not None:
            return _clean(rip["func"])
    return guilty(lines)


def _fault(prefix: str) -> Callable[[re.Match[str], list[str]], str]:
    return lambda match, lines: f"{prefix} in {faulting(lines)}"


def _kasan(match: re.Match[str], lines: list[str]) -> str:
    access = next((m[1] for line in lines[:4] if (m := re.search(r"(Read|Write) of size", line))), "")
    return f"KASAN: {match['what']}{' ' + access if access else ''} in {_clean(match['func'])}"


LOCK_SITE = re.compile(r", at: (?P<func>[A-Za-z_][\w.]*)\+0x")  # lockdep's "(&ctx->lock){+...}-{2:2}, at: f+0x28/0x35"


def _at_lock_site(prefix: str) -> Callable[[re.Match[str], list[str]], str]:
    """Where lockdep's report names the lock whose new use it objects to: its first ", at: FUNC" (the lock that
    "just changed the state"), as syzbot titles an irq lock inversion; else the guilty frame."""
    def title(match: re.Match[str], lines: list[str]) -> str:
        site = next((m["func"] for line in lines if (m := LOCK_SITE.search(line))), None)
        return f"{prefix} in {_clean(site) if site else guilty(lines)}"
    return title


def _below(marker: re.Pattern[str], prefix: str) -> Callable[[re.Match[str], list[str]], str]:
    """The guilty frame of the first backtrace after `marker`: for a safe -> unsafe lock order, where the
    irq-safe lock "became ... safe" (an interrupt's path), as syzbot titles it; else the report's first."""
    def title(match: re.Match[str], lines: list[str]) -> str:
        at = next((i for i, line in enumerate(lines) if marker.search(line)), None)
        return f"{prefix} in {guilty(lines if at is None else lines[at + 1:])}"
    return title


def _in_guilty(prefix: str) -> Callable[[re.Match[str], list[str]], str]:
    return lambda match, lines: f"{prefix} in {guilty(lines)}"


# First match wins; more specific patterns come first.
KINDS: tuple[Kind, ...] = (
    Kind("kasan", re.compile(r"BUG: KASAN: (?P<what>[\w-]+) in (?P<func>[\w.]+)"), _kasan, END_KASAN),
    Kind("ubsan", re.compile(r"UBSAN: (?P<what>[\w-]+) in "),
         lambda match, lines: f"UBSAN: {match['what']} in {guilty(lines)}"),
    Kind("lockdep", re.compile(r"WARNING: (possible circular locking dependency|possible recursive locking|"
                               r"inconsistent lock state|bad unlock balance)"), _in_guilty("possible deadlock"), None),
    Kind("lockdep", re.compile(r"WARNING: possible irq lock inversion dependency detected"),
         _at_lock_site("possible deadlock"), None),
    # "HARDIRQ-safe -> HARDIRQ-unsafe", or "SOFTIRQ-READ-safe -> ..." where the safe lock was only read in irq
    Kind("lockdep", re.compile(r"WARNING: [\w-]+-safe -> [\w-]+-unsafe lock order detected"),
         _below(re.compile(r"which became \S+ at:"), "possible deadlock"), None),
    Kind("lockdep", re.compile(r"WARNING: suspicious RCU usage"), _in_guilty("suspicious RCU usage"), None),
    Kind("bug", re.compile(r"BUG: sleeping function called from invalid context"),
         _in_guilty("BUG: sleeping function called from invalid context")),
    Kind("warning", re.compile(r"WARNING: (?:CPU: \d+ PID: \d+ at \S+ (?P<func>[\w.]+)\+0x|\S+ at (?P<func2>[\w.]+)\+0x)"),
         lambda match, lines: f"WARNING in {_clean(match['func'] or match['func2'] or faulting(lines))}"),
    Kind("bug", re.compile(r"BUG: kernel NULL pointer dereference|Unable to handle kernel NULL pointer dereference"),
         _fault("BUG: unable to handle kernel NULL pointer dereference")),
    Kind("bug", re.compile(r"BUG: unable to handle (page fault|kernel paging request)|"
                               r"Unable to handle kernel paging request"),
         _fault("BUG: unable to handle page fault")),
    Kind("bug", re.compile(r"PANIC: double fault"), _fault("PANIC: double fault")),
    Kind("bug", re.compile(r"general protection fault"), _fault("general protection fault")),
    Kind("bug", re.compile(r"kernel BUG at \S+!"), _fault("kernel BUG")),
    Kind("lockup", re.compile(r"BUG: soft lockup"), _fault("BUG: soft lockup")),
    Kind("hung task", re.compile(r"INFO: task \S.* blocked for more than \d+ seconds"), _in_guilty("INFO: task hung"),
         None),
    Kind("rcu stall", re.compile(r"INFO: rcu_\w+ (self-)?detected (stalls?|expedited stalls?)"),
         _in_guilty("INFO: rcu detected stall"), None),
    Kind("bug", re.compile(r"^\s*(Internal error: Oops|Oops: )"), _fault("Oops")),
    Kind("panic", re.compile(r"^\s*Kernel panic - not syncing: (?P<why>.*)"),
         lambda match, lines: f"kernel panic: {match['why'].strip()}", None),
)
# An x86 fault prints its "BUG: ..." line, then "#PF: ...", "PGD ...", then "Oops: ...": one report.
OOPS_FOLLOWS_WITHIN = 10
PANIC = next(k for k in KINDS if k.name == "panic")


@dataclass
class _Open:
    kind: Kind
    match: re.Match[str]
    line: int
    lines: list[str]
    ended: bool = False
    fatal: bool = False

    def close(self, cut: bool) -> Splat:
        return Splat(self.kind.name, self.kind.title(self.match, self.lines), self.line,
                     "\n".join(self.lines[:MAX_LINES]), self.fatal, cut and not self.ended and self.kind.end is not None)


def _start(text: str) -> tuple[Kind, re.Match[str]] | None:
    for kind in KINDS:
        if (match := kind.start.search(text)) is not None:
            return kind, match
    return None


def find(console: str) -> list[Splat]:
    """Every kernel report in a console log, in order (not yet attributed to a case)."""
    found: list[Splat] = []
    current: _Open | None = None
    since_frame = True  # a framed line came after the last report: a panic then is a report of its own
    for number, raw in enumerate(console.replace("\r", "").split("\n"), start=1):
        if (frame := FRAME.search(raw)) is not None:  # the guest's framed KTAP: never part of a report
            since_frame = True
            if crc_holds(frame, frame["payload"]):  # the whole line is as the guest framed it: a reproducer's
                continue  # text, whatever kernel report it looks like, never the kernel's
            spliced = SPLICED.search(raw, frame.start("payload"))  # a kernel line printed into the frame
            if spliced is None:
                continue
            raw = raw[spliced.start():]  # the kernel's line, without the frame it landed in
        text = TIMESTAMP.sub("", raw)
        started = _start(text)
        if started is not None and current is not None:
            kind, _ = started
            follows_fault = kind.name == "bug" and text.lstrip().startswith(("Oops", "Internal error")) and \
                not current.ended and number - current.line <= OOPS_FOLLOWS_WITHIN
            consequence = kind is PANIC and current.kind is not PANIC and not since_frame
            if follows_fault or consequence:
                current.lines.append(text)
                current.fatal = current.fatal or consequence
                if consequence:
                    current.ended = True
                continue
        if started is not None:
            if current is not None:
                found.append(current.close(cut=False))
            kind, match = started
            current = _Open(kind, match, number, [text], fatal=kind is PANIC)
            since_frame = False
            continue
        if current is not None and not current.ended:
            current.lines.append(text)
            if current.kind.end is not None and current.kind.end.search(text):
                current.ended = True
    if current is not None:
        found.append(current.close(cut=True))
    return found
