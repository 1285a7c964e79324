"""The function a kernel report is about, read off its backtrace the way syzkaller's pkg/report reads it: the
first reliable frame that is not report, locking, allocation or entry machinery, a compiler's clone named as
its function and a syscall's wrappers as the syscall."""

from __future__ import annotations

import re
from collections.abc import Iterable

# " func+0x1c/0x30", "  [<ffffffff8123>] func+0x1c/0x30" (print_ip_sym()); " ? func+0x1c/0x30" is unreliable.
FRAME = re.compile(r"^\s*(?:\[<?[0-9a-f]+>?\]\s+)?(?P<unreliable>\? )?(?P<func>[A-Za-z_][\w.]*)\+0x[0-9a-f]+/0x[0-9a-f]+")
# Where the CPU was: x86's "RIP: 0010:func+0x.." (RIP: func+.. before 4.x), arm64's "pc : func+0x..".
WHERE = re.compile(r"(?:RIP: (?:0010:)?|pc : )(?P<func>[A-Za-z_][\w.]*)\+0x")
CALL_TRACE = re.compile(r"^\s*Call [Tt]race:")
# What a title names when the report names no frame (a trace the console's loglevel hid, a spiral): syzkaller's
# word for it, so the title is the one syzbot gives such a report.
NO_FRAME = "corrupted"

# Frames that are never what a report is about, whole names or, unanchored, parts of names (as syzkaller
# skips them): the report's printing, sanitizers, lockdep and locking, allocators, refcount and list checks,
# string and user copies, waiting, interrupt and syscall entry, and arm64's fault path.
_MACHINERY = (
    r"^(dump_stack\w*|show_stack|show_trace_log_lvl|dump_backtrace|arch_stack_walk|stack_trace_\w+|__warn\w*|"
    r"warn_\w+|report_bug|handle_bug|fixup_bug|do_error_trap|do_trap|\w*invalid_op|die|__die\w*|oops_\w+|"
    r"asm_exc_\w+|page_fault_oops|kernelmode_fixup_or_oops|__bad_area_nosemaphore|bad_area\w*|"
    r"do_user_addr_fault|handle_page_fault|do_page_fault|__do_kernel_fault|die_kernel_fault|do_bad_area|"
    r"do_(kernel|translation)_fault|do_mem_abort|el1_abort|el1h_64_sync\w*|el1_\w+|el0_\w+|el0t_\w+|"
    r"\w*panic\w*|assertfail|print_\w+|__print_\w+|\w*printk\w*|trace_(hard|soft)irqs_\w+|perf_trace_\w+|"
    r"__report_\w+|_*[kh]?[am]san\w*|__asan_\w+|ubsan_\w+|__ubsan_\w+|kfence_\w+|__kfence_\w+|kcsan_\w+|"
    r"__read_once_\w*nocheck|read_word_at_a_time|__phys_addr|__x86_indirect_thunk_\w+|"
    r"lock_acquire\w*|lock_release|__lock_acquire|lock_is_held\w*|lockdep_\w+|_*check_\w+|validate_chain|"
    r"register_lock_class|mark_lock\w*|mark_usage|mark_held_locks|reacquire_held_locks|__lock_release|"
    r"_raw_\w+|do_raw_\w+|queued_\w+|__raw_\w+|spin_lock\w*|spin_unlock\w*|read_lock\w*|read_unlock\w*|"
    r"write_lock\w*|write_unlock\w*|mutex_\w+|__mutex_\w+|rt_mutex_\w+|down|\w*down_(read|write)\w*|down_\w+|"
    r"\w*up_(read|write)\w*|__down_\w+|__up_\w+|osq_\w+|raw_spin_rq_\w+|"
    r"_*might_(sleep|resched|fault)|sched_show_task|show_regs\w*|nmi_cpu_backtrace\w*|\w+_cpumask_backtrace|"
    r"dump_cpu_task|_*sanitizer_cov\w*|"
    r"refcount_\w+|__refcount_\w+|kref_\w+|__list_\w+_valid\w*|__list_\w+|list_add\w*|list_del\w*|"
    r"__fortify_report|_*mem(cpy|set|move|cmp|chr|dup)\w*|str(n?cpy|lcpy|scpy|n?cmp|n?len|n?str|chr|n?dup)|"
    r"\w*copy_(to|from)_user\w*|raw_copy_\w+|"
    r"folio_(alloc|unlock)\w*|_*alloc_pages\w*|_*local_bh_\w+|\w*seqprop_assert|k[vmzc]?alloc\w*|__k[vmzc]?alloc\w*|kmem_cache_\w+|__kmem_cache_\w+|slab_\w+|___slab_alloc|__slab_\w+|"
    r"kv?free|__kv?free\w*|kfree_skb\w*|iput|iput_final|ihold|_*rb_\w+|"
    r"_*kobject_\w+|device_(add|del|unregister|destroy|release)|devres_release_all|sysfs_remove\w*|"
    r"debug_object\w*|\w+_is_static_object|lock_timer_base|del_timer\w*|__timer_delete\w*|__mod_timer|"
    r"_*flush_work|__cancel_work\w*|cancel_work_sync|_*queue_work\w*|insert_work|\w+_workqueue|"
    r"wait_for_\w+|__wait_for_\w+|finish_wait|_?atomic(64)?_\w+|arch_atomic\w*|"
    r"__wake_up\w*|"
    r"sysvec_\w+|asm_sysvec_\w+|__sysvec_\w+|irq_exit\w*|__irq_exit\w*|handle_softirqs|__do_softirq|do_softirq|"
    r"tick_sched_\w+|tick_nohz_\w+|tick_handle_\w+|tick_periodic|update_process_times|hrtimer_\w+|__hrtimer_\w+|watchdog_\w+|kthread|ret_from_fork\w*|"
    r"rcu_\w+|__rcu_\w+|"
    r"entry_SYSCALL_\w+|do_syscall_\w+|x64_sys_call|invoke_syscall|do_el0_svc|el0_svc_common)$"
)
NOT_GUILTY = re.compile(_MACHINERY)
# A syscall's wrappers, taken off its name so that every architecture's report names the syscall alike.
_SYSCALL_PREFIXES = ("__x64_sys_", "__ia32_sys_", "__arm64_sys_", "__se_sys_", "__do_sys_", "__sys_", "ksys_",
                     "sys_")


def _unclone(func: str) -> str:
    """perf_event_wakeup.constprop.0 -> perf_event_wakeup: a compiler's clone is the same function."""
    return re.sub(r"\.(constprop|isra|part|cold|llvm)(\.\d+)?", "", func)


def clean(func: str) -> str:
    """The function as a title names it: uncloned, and __do_sys_perf_event_open -> perf_event_open (the
    shortest name a syscall prefix leaves)."""
    func = _unclone(func)
    names = [func[len(p):] for p in _SYSCALL_PREFIXES if func.startswith(p) and len(func) > len(p)]
    return min(names, key=len) if names else func


def frames(lines: Iterable[str], skip: re.Pattern[str] | None = None) -> Iterable[str]:
    """The reliable frames of these lines, cleaned, machinery (and `skip`) left out."""
    for line in lines:
        frame = FRAME.match(line)
        if frame is None or frame["unreliable"]:
            continue
        name = named(frame["func"])
        if name is not None and (skip is None or not skip.search(name)):
            yield name


def guilty(lines: Iterable[str], skip: re.Pattern[str] | None = None) -> str:
    """The first frame that is not machinery, or NO_FRAME."""
    return next(iter(frames(lines, skip)), NO_FRAME)


def after(marker: re.Pattern[str], lines: list[str]) -> list[str]:
    """The lines after the first that `marker` finds (all of them when none does)."""
    at = next((i for i, line in enumerate(lines) if marker.search(line)), None)
    return lines if at is None else lines[at + 1:]


def in_call_trace(lines: list[str]) -> str:
    """The guilty frame of the first "Call Trace:", else of the whole report."""
    return guilty(after(CALL_TRACE, lines))


def named(func: str) -> str | None:
    """The function as a title names it, or None if it is machinery."""
    func = _unclone(func)
    return None if NOT_GUILTY.match(func) else clean(func)


def cpu_was_in(lines: list[str]) -> str | None:
    """The function the first RIP or pc line names, raw (None when none does)."""
    return next((m["func"] for line in lines if (m := WHERE.search(line)) is not None), None)


def faulting(lines: list[str]) -> str:
    """Where the CPU was (RIP or pc) unless that is machinery (a refcount or list check, an allocator), else
    the first guilty frame of the call trace."""
    where = cpu_was_in(lines)
    return (named(where) if where else None) or in_call_trace(lines)


# Where a stall's loop was entered from (syzkaller's linuxStallAnchorFrames, in part): syscall and work entry, the
# file and socket operations that dispatch to a driver or protocol, page faults, task work.
_ANCHORS = re.compile(
    r"process_one_work|do_syscall_|do_fast_syscall_|invoke_syscall|el0_svc_handler|ret_fast_syscall|"
    r"netif_receive_skb|do_softirq|call_timer_fn|_run_timers|run_timer_softirq|hrtimer_run|run_ksoftirqd|"
    r"smpboot_thread_fn|^kthread$|start_secondary|cpu_startup_entry|ret_from_fork|"
    r"vfs_(write|read|iter_read|iter_write|ioctl|open)|do_iter_(read|write|readv_writev)|call_(read|write)_iter|"
    r"new_sync_(read|write)|ksys_ioctl|compat_(sys_)?ioctl|blkdev_(driver_)?ioctl|^call_mmap|mmap_region|do_mmap|"
    r"do_dentry_open|^sock_(sendmsg|recvmsg|release|mmap|do_ioctl|ioctl)|^__sock_release|^setsockopt$|"
    r"kernel_(setsockopt|listen|accept)|sock_common_setsockopt|^listen$|sk_common_release|^accept$|"
    r"^compat_sock_ioctl|^(nfnetlink|rtnetlink)_rcv_msg|^netlink_dump|^(sys_)?(socketpair|connect|ioctl)|"
    r"__do_fault|do_page_fault|^page_fault$|__fput|task_work_run|exit_to_usermode|smp_call_function|"
    r"tasklet_(hi_)?action")


# Where an RCU stall's report turns from the interrupt that noticed it to the task it interrupted (x86's timer
# interrupt entry, arm64's "el1h_64_irq", an exception stack), as a frame of the trace.
_TIMER_INTERRUPT = re.compile(r"^\s*(?:\[<?[0-9a-f]+>?\]\s+)?[\w.]*(apic_timer_interrupt|el1h_64_irq)\w*\+0x|"
                              r"Exception stack")


def stalled(lines: list[str], interrupted: bool = False, skip: re.Pattern[str] | None = None) -> str:
    """Where a stall or lockup loops, as syzkaller's linuxStallFrameExtractor names it: not the frame it happened
    to be in (a loop spans several), but the last one before where the work was entered (a syscall's file
    operation, a work item): for a write() to a driver, the driver's write; the first frame when it is itself
    such an entry. Read from where the CPU was and the call trace; with `interrupted` (an RCU stall), from the
    task the timer interrupted on; `skip`: frames the report's kind never names. With no entry frame, the first
    guilty one (syzkaller says "corrupted")."""
    if interrupted and (cut := after(_TIMER_INTERRUPT, lines)) is not lines:
        traced, where = cut, cpu_was_in(cut)
    else:
        traced, where = after(CALL_TRACE, lines), cpu_was_in(lines)
    raw = ([where] if where else []) + [m["func"] for line in traced
                                        if (m := FRAME.match(line)) is not None and not m["unreliable"]]
    raw = [func for func in raw if skip is None or not skip.search(func)]
    previous = None
    for func in raw:
        if _ANCHORS.search(clean(func)):
            if "smp_call_function" in func:
                return "smp_call_function"
            return previous or clean(func)
        previous = named(func) or previous
    return faulting(lines)


def has_where(lines: list[str]) -> bool:
    return any(WHERE.search(line) for line in lines)
