"""The kinds of kernel report a console can hold: the line each starts on, the line it ends on, and its title
as syzbot would give it (syzkaller's pkg/report: "possible deadlock in X", "WARNING: refcount bug in X",
"BUG: corrupted list in X", "invalid opcode in X"), X read off the report as pkg/report reads it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .frames import (CALL_TRACE, NO_FRAME, after, clean, faulting, frames, guilty, has_where, in_call_trace, named,
                     stalled)

END_TRACE = re.compile(r"---\[ end (trace|Kernel panic)")  # how a WARNING, an Oops or a panic ends
END_RULE = re.compile(r"^={20,}")  # how KASAN and KFENCE end

Title = Callable[[re.Match[str], list[str]], str]


@dataclass(frozen=True)
class Kind:
    name: str  # what the report is: warning, bug, kasan, kfence, ubsan, lockdep, hung task, rcu stall, lockup, panic
    start: re.Pattern[str]
    title: Title  # from the start line and the report's lines
    end: re.Pattern[str] | None = END_TRACE  # its last line; None: it has none (hung task, stall, lockdep)
    oops_follows: bool = False  # a fault: its "Oops:" ("Internal error:", "invalid opcode:") line comes later


# lockdep names a lock's site "(&ctx->lock){+...}-{2:2}, at: f+0x28/0x35" (or "at: [<addr>] f+0x28/0x35").
_SITE = re.compile(r"\bat: (?:\[<?[0-9a-f]+>?\] +)?(?P<func>[A-Za-z_][\w.]*)\+0x")
# Workqueue flushing is where a circular dependency through a work item shows, never its cause.
_WORKQUEUE = re.compile(r"^(process_one_work|flush_workqueue|drain_workqueue|destroy_workqueue|__flush_work)$")


def _after(marker: str, lines: list[str]) -> list[str]:
    """The lines after the first that holds `marker` (all of them when none does)."""
    return after(re.compile(re.escape(marker)), lines)


def _site(lines: list[str]) -> str | None:
    """The first lock site ("at: FUNC") in these lines, machinery or not (lockdep names where the lock is taken)."""
    return next((clean(m["func"]) for line in lines if (m := _SITE.search(line)) is not None), None)


def _site_after(marker: str, prefix: str) -> Title:
    """The lock site under `marker` (syzbot's rule for recursive locking, an irq lock inversion, a held lock)."""
    return lambda match, lines: f"{prefix} in {_site(_after(marker, lines)) or in_call_trace(lines)}"


def _circular(match: re.Match[str], lines: list[str]) -> str:
    """The site of the lock being acquired, else of the lock held, else the dependency chain's first frame:
    the first of these that is not locking machinery (a lock taken in down_trylock() is its caller's)."""
    candidates = [_SITE.search(line) for line in _after("is trying to acquire lock", lines)]
    sites = [m["func"] for m in candidates if m is not None][:2]
    for func in sites:
        if (name := named(func)) is not None and not _WORKQUEUE.match(name):
            return f"possible deadlock in {name}"
    held = _after("already holding lock", lines)
    return f"possible deadlock in {guilty(_after('at: ', held), _WORKQUEUE)}"


def _unlock_balance(match: re.Match[str], lines: list[str]) -> str:
    """The frame lockdep prints under "is trying to release lock (...) at:" unless that is the unlock itself,
    else the call trace's first guilty frame."""
    site = next(iter(frames(_after("is trying to release lock", lines)[:1])), None)
    return f"WARNING: bad unlock balance in {site or in_call_trace(lines)}"


def _below(marker: re.Pattern[str], prefix: str) -> Title:
    """The guilty frame of the first backtrace after `marker`: for a safe -> unsafe lock order, where the
    irq-safe lock "became ... safe" (an interrupt's path), as syzbot titles it; else the report's first."""
    return lambda match, lines: f"{prefix} in {guilty(after(marker, lines))}"


def _warning(prefix: str) -> Title:
    """Where the CPU was (its RIP or pc) unless that is machinery, else the call trace's first frame; a
    WARNING cut before its registers is the function its first line names."""
    def title(match: re.Match[str], lines: list[str]) -> str:
        if has_where(lines):
            return f"{prefix} in {faulting(lines)}"
        func = match.groupdict().get("func") or match.groupdict().get("func2")
        return f"{prefix} in {(named(func) if func else None) or in_call_trace(lines)}"
    return title


def _fault(prefix: str) -> Title:
    return lambda match, lines: f"{prefix} in {faulting(lines)}"


_SOCKET_LOCK = re.compile(r"lock_sock|release_sock")  # a socket's lock is taken for its caller
# The scheduler is where "scheduling while atomic" and a corrupted stack end are found, never their cause
# (syzkaller skips it for these alone: an RCU misuse in __schedule() is titled so).
_SCHEDULE = re.compile(r"schedule")


def _traced(prefix: str) -> Title:
    return lambda match, lines: f"{prefix} in {in_call_trace(lines)}"


# Where a hung task waits is waiting itself; what it waits in is the first frame that is not.
_WAITING = re.compile(r"sched|_lock|_slowlock|down|rwsem|completion|kthread|wait|synchronize|context_switch|"
                      r"__switch_to|cancel_delayed_work|rcu_barrier")


def _hung(match: re.Match[str], lines: list[str]) -> str:
    """syzbot's rule: a task stuck in rtnl_lock() or an RCU grace period is titled so, else in the first frame
    that is not waiting."""
    stack = list(frames(after(CALL_TRACE, lines)))
    where = next((f for f in stack if "rtnl_lock" in f), None) or \
        next(("synchronize_rcu" for f in stack if re.search(r"synchronize_(rcu|srcu|net|sched)", f)), None) or \
        next((f for f in stack if not _WAITING.search(f)), NO_FRAME)
    return f"INFO: task hung in {where}"


# What frees a slab object is never where an invalid free is (syzkaller's skips for it, unanchored).
_FREEING = re.compile(r"slab_|kfree|vunmap|vfree")


_PANIC_LINE = re.compile(r"Kernel panic - not syncing")  # its stack is the detecting CPU's
_OTHER_CPU = re.compile(r"NMI backtrace for cpu|Sending NMI")  # where one CPU's dump gives way to another's


def _hard_lockup(match: re.Match[str], lines: list[str]) -> str:
    """Where the locked CPU loops, from its own dump alone, before the panic: its NMI backtrace ("NMI backtrace
    for cpu N"), or the registers a detector on that CPU printed ("CPU: N ..."). Where the kernel could not
    make it print them (arm64 without pseudo-NMI: its backtrace IPI waits behind the disabled interrupts), no
    frame is named: the stacks around it are other CPUs'."""
    before = lines[:next((i for i, line in enumerate(lines) if _PANIC_LINE.search(line)), len(lines))]
    own = re.compile(rf"NMI backtrace for cpu {match['cpu']}\b|\bCPU: {match['cpu']} (?:UID|PID)")
    first = next((i for i, line in enumerate(before) if own.search(line)), None)
    if first is None:
        return f"BUG: hard lockup in {NO_FRAME}"
    dump = before[first:]
    end = next((i for i, line in enumerate(dump) if i and _OTHER_CPU.search(line)), len(dump))
    return f"BUG: hard lockup in {stalled(dump[:end])}"


def _kasan(match: re.Match[str], lines: list[str]) -> str:
    where = named(match["func"]) or in_call_trace(lines)
    if match["what"].endswith("invalid-free") or match["what"] == "double-free":  # syzbot's one word for all three
        if _FREEING.search(match["func"]):
            where = guilty(after(CALL_TRACE, lines), _FREEING)
        return f"KASAN: invalid-free in {where}"
    access = next((m[1] for line in lines[:4] if (m := re.search(r"(Read|Write) of size", line))), "")
    return f"KASAN: {match['what']}{' ' + access if access else ''} in {where}"


def _kfence(match: re.Match[str], lines: list[str]) -> str:
    access = f" {match['access']}" if match["access"] else ""
    return f"KFENCE: {match['what']}{access} in {named(match['func']) or in_call_trace(lines)}"


# Panics syzkaller names by their kind alone, whatever follows (a task's exit code, a tty).
_PANIC_ALONE = ("Attempted to kill init!", "Couldn't open N_TTY ldisc", "Fatal exception", "panic_on_warn set",
                "hung_task: blocked tasks")
_STACK_PROTECTOR = re.compile(r"stack-protector: Kernel stack is corrupted in: (?P<func>[A-Za-z_]\w*)(?:\.|\+)")


def _panic(match: re.Match[str], lines: list[str]) -> str:
    """syzkaller's panic formats: the stack protector's function (or, where it printed an address, the call
    trace's first frame that is not the check), a stack overflow where its work was entered, else the reason."""
    why = match["why"].strip()
    if why.startswith("stack-protector:"):
        found = _STACK_PROTECTOR.match(why)
        where = found["func"] if found else guilty(after(CALL_TRACE, lines), _STACK_CHK)
        return f"kernel panic: stack is corrupted in {where}"
    if why.startswith("corrupted stack end"):
        return f"kernel panic: corrupted stack end in {stalled(lines, skip=_STACK_END)}"
    if why.startswith("kernel stack overflow"):  # arm64's, after "Insufficient stack space"
        return f"kernel stack overflow in {stalled(lines, skip=_BAD_STACK)}"
    return f"kernel panic: {next((alone for alone in _PANIC_ALONE if why.startswith(alone)), why)}"


_STACK_CHK = re.compile(r"stack_chk")
_BAD_STACK = re.compile(r"bad_stack")  # arm64's overflow handler: syzkaller's skip
_STACK_END = re.compile(r"schedule|retint_kernel")
_USERCOPY = re.compile(r"usercopy|__check")  # syzkaller's: unanchored, so do_usercopy_* (lkdtm's helpers) too

_WARNING_AT = r"WARNING: (?:CPU: \d+ PID: \d+ at (?:\S+:\d+ )?(?P<func>[\w.]+)\+0x|\S+ at (?P<func2>[\w.]+)\+0x)"

# First match wins; more specific patterns come first.
KINDS: tuple[Kind, ...] = (
    Kind("kasan", re.compile(r"BUG: KASAN: (?P<what>double-free or invalid-free|[\w-]+) in (?P<func>[\w.]+)"), _kasan,
         END_RULE),
    Kind("kfence", re.compile(r"BUG: KFENCE: (?P<what>use-after-free|out-of-bounds|invalid free|invalid|"
                              r"memory corruption)(?: (?P<access>read|write))? in (?P<func>[\w.]+)"),
         _kfence, END_RULE),
    Kind("ubsan", re.compile(r"UBSAN: (?P<what>[\w-]+) in "),
         lambda match, lines: f"UBSAN: {match['what']} in {guilty(lines)}"),
    Kind("lockdep", re.compile(r"WARNING: possible circular locking dependency detected"), _circular, None),
    Kind("lockdep", re.compile(r"WARNING: possible recursive locking detected"),
         _site_after("is trying to acquire lock", "possible deadlock"), None),
    Kind("lockdep", re.compile(r"WARNING: inconsistent lock state"), _traced("inconsistent lock state"), None),
    Kind("lockdep", re.compile(r"(WARNING|BUG): bad unlock balance detected"), _unlock_balance, None),
    Kind("lockdep", re.compile(r"WARNING: possible irq lock inversion dependency detected"),
         _site_after("just changed the state of lock", "possible deadlock"), None),
    # "HARDIRQ-safe -> HARDIRQ-unsafe", or "SOFTIRQ-READ-safe -> ..." where the safe lock was only read in irq
    Kind("lockdep", re.compile(r"WARNING: [\w-]+-safe -> [\w-]+-unsafe lock order detected"),
         _below(re.compile(r"which became \S+ at:"), "possible deadlock"), None),
    Kind("lockdep", re.compile(r"WARNING: held lock freed!"), _site_after("held lock freed", "WARNING: held lock freed"),
         None),
    Kind("lockdep", re.compile(r"WARNING: lock held when returning to user space!"),
         _site_after("leaving the kernel with locks still held", "WARNING: lock held when returning to user space"),
         None),
    # a task that exits holding a lock (arm64's 6.1 has no check on return to user space; exit has)
    Kind("lockdep", re.compile(r"(?P<level>WARNING|BUG): .* still has locks held!"),
         lambda match, lines: f"{match['level']}: still has locks held in {_site(lines) or in_call_trace(lines)}",
         None),
    Kind("lockdep", re.compile(r"WARNING: suspicious RCU usage"), _traced("WARNING: suspicious RCU usage"), None),
    # a sleeping lock taken where a spinning one is held (lockdep's wait-type check): syzbot's "locking bug"
    Kind("lockdep", re.compile(r"\[ BUG: Invalid wait context \]"),
         lambda match, lines: f"WARNING: locking bug in {guilty(after(CALL_TRACE, lines), _SOCKET_LOCK)}", None),
    # These two print a backtrace and no end line.
    Kind("bug", re.compile(r"BUG: sleeping function called from invalid context"),
         _traced("BUG: sleeping function called from invalid context"), None),
    Kind("bug", re.compile(r"BUG: scheduling while atomic"),
         lambda match, lines: f"BUG: scheduling while atomic in {guilty(after(CALL_TRACE, lines), _SCHEDULE)}", None),
    Kind("warning", re.compile(r"WARNING: (?:CPU: \d+ PID: \d+ at )?lib/refcount\.c"),
         _warning("WARNING: refcount bug")),
    Kind("warning", re.compile(_WARNING_AT), _warning("WARNING")),
    Kind("bug", re.compile(r"kernel BUG at lib/list_debug\.c"), _traced("BUG: corrupted list"), oops_follows=True),
    # hardened usercopy's abort: named by the first caller that is not a usercopy check or helper
    Kind("bug", re.compile(r"kernel BUG at mm/usercopy\.c"),
         lambda match, lines: f"BUG: bad usercopy in {guilty(after(CALL_TRACE, lines), _USERCOPY)}", oops_follows=True),
    Kind("bug", re.compile(r"BUG: kernel NULL pointer dereference|BUG: unable to handle kernel NULL pointer"),
         _fault("BUG: unable to handle kernel NULL pointer dereference"), oops_follows=True),
    Kind("bug", re.compile(r"BUG: unable to handle (page fault|kernel paging request)"),
         _fault("BUG: unable to handle kernel paging request"), oops_follows=True),
    Kind("bug", re.compile(r"Unable to handle kernel (?P<what>paging request|NULL pointer dereference|"
                           r"access to user memory)"),
         lambda match, lines: f"BUG: unable to handle kernel {match['what']} in {faulting(lines)}", oops_follows=True),
    # arm64's other aborts ("write to read-only memory", "execute from non-executable memory"): no format of
    # syzkaller's matches them, so the line itself is the title, its address made ADDR (titled()).
    Kind("bug", re.compile(r"Unable to handle kernel .*"), lambda match, lines: match[0].rstrip(), oops_follows=True),
    # x86's VMAP_STACK overflow ("BUG: TASK stack guard page was hit at ..."): where its recursion was entered
    Kind("bug", re.compile(r"BUG: .*stack guard page was hit at"),
         lambda match, lines: f"BUG: stack guard page was hit in {stalled(lines)}", oops_follows=True),
    Kind("bug", re.compile(r"PANIC: double fault"), _fault("PANIC: double fault"), oops_follows=True),
    Kind("bug", re.compile(r"general protection fault"), _fault("general protection fault")),
    Kind("bug", re.compile(r"kernel BUG at \S+!"), _fault("kernel BUG"), oops_follows=True),
    # x86's traps: 6.1 prints "invalid opcode: 0000 [#1] ...", 6.12 "Oops: invalid opcode: 0000 [#1] ..."
    Kind("bug", re.compile(r"\s*(?:Oops: )?(?P<what>invalid opcode|int3|divide error|divide_error): 0000"),
         lambda match, lines: f"{match['what'].replace('_', ' ')} in {faulting(lines)}"),
    Kind("lockup", re.compile(r"BUG: soft lockup"), lambda match, lines: f"BUG: soft lockup in {stalled(lines)}"),
    # syzkaller has no hard lockup format: sigwake titles it as a soft lockup, by where its loop was entered.
    # 6.12 says "Watchdog detected hard LOCKUP on cpu 0"; 7.x names the CPU that saw it first ("CPU0: ...")
    Kind("lockup", re.compile(r"(?:CPU\d+: )?Watchdog detected hard LOCKUP on cpu (?P<cpu>\d+)"), _hard_lockup),
    # 7.x says "blocked in I/O wait for more than" of a task in io_schedule()
    Kind("hung task", re.compile(r"INFO: task \S.* blocked (?:in I/O wait )?for more than \d+ seconds"), _hung,
         None),
    Kind("rcu stall", re.compile(r"INFO: rcu_\w+ (self-)?detected (stalls?|expedited stalls?)"),
         lambda match, lines: f"INFO: rcu detected stall in {stalled(lines, interrupted=True)}", None),
    Kind("bug", re.compile(r"\s*(Internal error: Oops|Oops: )"), _fault("Oops")),
    Kind("panic", re.compile(r"\s*Kernel panic - not syncing: (?P<why>.*)"), _panic, None),
)
PANIC = next(k for k in KINDS if k.name == "panic")

# syzkaller's replacements in every title, in its order, each until nothing changes (report.go's
# dynamicTitleReplacement; its classes are ASCII, as Go's are): what differs from one occurrence of a bug to the
# next (a process number, an address, a line, an offset, a CPU, a number) is not the bug's name.
_REPLACEMENTS = tuple((re.compile(pattern, re.ASCII), replacement) for pattern, replacement in (
    (r"syz-executor\.?[0-9]+((/|:)[0-9]+)?", "syz-executor"),
    (r"syzkaller[0-9]+((/|:)[0-9]+)?", "syzkaller"),
    (r"([^a-zA-Z0-9])(?:0x)?[0-9a-f]{6,}", r"\1ADDR"),
    (r"([0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3})", "IP"),
    (r"(\.\w+)(:[0-9]+)+", r"\1:LINE"),
    (r"([a-zA-Z][a-zA-Z0-9_.]+)\+0x[0-9a-z]+/0x[0-9a-z]+", r"\1"),
    (r"CPU#[0-9]+", "CPU"),
    (r"(\W)(\d+)(\W|$)", r"\1NUM\3"),
    (r"(\d+){7,}", "NUM")))
MAX_TITLE = 120  # bytes: syzkaller's sanitizeTitle(), for corrupted or intermixed lines


def titled(kind: Kind, match: re.Match[str], lines: list[str]) -> str:
    """The report's title as syzbot lists it."""
    title = kind.title(match, lines)
    for pattern, replacement in _REPLACEMENTS:
        while (replaced := pattern.sub(replacement, title)) != title:
            title = replaced
    kept = bytes(b" "[0] if b == 9 else b for b in title.encode()[:MAX_TITLE] if b == 9 or 0x20 <= b < 0x7f)
    return re.sub(" {2,}", " ", kept.decode()).strip()


# What a fault report prints after its first line ("kernel BUG at", "BUG: unable to handle", arm64's "Unable to
# handle" and its abort block): never a report of its own.
FOLLOW_UP = re.compile(r"^\s*(Oops: |Internal error: |invalid opcode: 0000)")  # once per fault


# Where a report names its task: the "CPU: 0 UID: 0 PID: 68 Comm: bpf_event_lost" line (6.1 has no UID), the
# 2025 WARNING format's "CPU#0: comm/pid", lockdep's "comm/pid [HC0[0]:...] is trying to acquire", a hung
# task's "task comm:pid", KASAN's "by task".
_TASK_LINES = (re.compile(r"\bPID: (?P<pid>\d+) Comm: (?P<comm>\S+)"),
               re.compile(r"\bCPU#\d+: (?P<comm>\S+)/(?P<pid>\d+)"),  # the 2025 WARNING line's
               re.compile(r"^(?P<comm>\S+)/(?P<pid>\d+) (?:\[[^\]]*\] )?(?:is |takes|just changed)"),
               re.compile(r"INFO: task (?P<comm>\S+):(?P<pid>\d+) blocked"),
               re.compile(r"\bby task (?P<comm>\S+)/(?P<pid>\d+)"))


def task(lines: list[str]) -> str:
    """The task a report names first, "comm/pid" ("" if it names none): a hung task's own before the panic's."""
    for line in lines:
        for pattern in _TASK_LINES:
            if (found := pattern.search(line)) is not None:
                return f"{found['comm']}/{found['pid']}"
    return ""


# A line the kernel begins with a task's comm ("%s[%d]: segfault at ...", "...[%d] is installing a program with
# bpf_probe_write_user", "%s invoked oom-killer:", "%s (%d) used greatest stack depth", warn_alloc()'s "%s: page
# allocation failure"): the comm is the task's choice (prctl(PR_SET_NAME), 15 bytes), so "UBSAN: a in b[42]:
# segfault at 0" is a process's name, never a report.
COMM_LINE = re.compile(r".{1,15}(?:\[\d+\]:? | invoked oom-killer:| \(\d+\) used greatest stack depth|: page allocation "
                       r"failure)")
# What the kernel prints before a report's first words on its line: pr_fmt prefixes of the detectors (x86's
# "traps: PANIC: double fault", "watchdog: BUG: soft lockup", "rcu: INFO: rcu_preempt detected stalls"), 6.12's
# "Oops: " before a trap's name, x86's "segment-related " before a general protection fault, and older lockdep's
# "[ " around its title. A report's words anywhere else in a line are a string the kernel quoted (an exec'd path,
# a device name), which a process may choose.
PREFIX = re.compile(r"(?:(?:(?:NMI )?watchdog|rcu|traps|Oops): |segment-related |\[ )+")


def start(text: str) -> tuple[Kind, re.Match[str]] | None:
    """The kind of report this console line starts, if any: its words at the start of the line (after a
    detector's prefix). Each kind's pattern is matched there (re.match), so none of them needs a '^'."""
    at = (0, prefix.end()) if (prefix := PREFIX.match(text)) is not None else (0,)
    if any(COMM_LINE.match(text, position) for position in at):  # x86's "traps: comm[pid] trap int3 ..." too
        return None
    for kind in KINDS:
        for position in at:
            if (match := kind.start.match(text, position)) is not None:
                return kind, match
    return None
