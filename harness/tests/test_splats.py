"""Kernel reports read off a console: golden logs of each kind (harness/tests/data/splats/) with the title
maintainers triage by, a report cut off mid-way, one interleaved with the guest's frames, the case that was
running, and the committed cloud kernel's crash read back from its console log."""

from __future__ import annotations

from pathlib import Path

import pytest

from sigwake.parse import console
from sigwake.parse import ktap
from sigwake.parse import splats
from sigwake.parse.attribution import attribute
from sigwake.parse.console import frame_line

DATA = Path(__file__).parent / "data" / "splats"
# The cloud 6.12.95 kernel that oopsed mid-run under TCG, as results/ held it (schema 2, sigwake 05cf824c3a89).
CRASH = Path(__file__).parent / "data" / "crash-cloud-6.12.95"


@pytest.mark.parametrize("log, line, kind, title, fatal", [
    ("warning.log", 2, "warning", "WARNING in perf_event_wakeup", False),
    ("null-deref.log", 1, "bug", "BUG: unable to handle kernel NULL pointer dereference in send_sigio", False),
    ("kasan.log", 2, "kasan", "KASAN: slab-use-after-free Read in perf_output_wakeup", False),
    ("ubsan.log", 1, "ubsan", "UBSAN: shift-out-of-bounds in ring_buffer_init", False),
    ("lockdep.log", 2, "lockdep", "possible deadlock in perf_mmap", False),
    # A real console: 6.12.118 built with kernel-configs/lockdep.config and fe826cc2654e undone
    # (bench/history/event-function-call-irqs-on.patch), as exit_wakeup_poll ran; the report whole.
    ("irq-inversion-6.12.log", 3, "lockdep", "possible deadlock in perf_ctx_lock", False),
    # A real console: the same tree with kernel-configs lockdep, inet, input and smp and f671a691e299 undone
    # (bench/history/fcntl-getown-fown-lock-irqs-on.patch), as evdev_sigio_written ran: F_GETOWN had read
    # fown->lock with interrupts on, and atkbd's interrupt had taken the evdev reader's buffer_lock. Titled at
    # the interrupt's path, where buffer_lock "became HARDIRQ-irq-safe".
    ("hardirq-lock-order-6.12.log", 3, "lockdep", "possible deadlock in evdev_pass_values", False),
    # A real console: 6.12.118 with --config smp and a generated mutant of __perf_output_begin() (the parent
    # event's ring read when the event has none), as bpf_event_after_lost ran; 6.12's "Oops: Oops: 0000" form,
    # the registers printed again after the end of the trace.
    ("null-deref-6.12-smp.log", 2, "bug",
     "BUG: unable to handle kernel NULL pointer dereference in perf_output_begin", False),
    # A real console: 6.12.118 with kernel-configs/lockdep.config and a re-created bug of history's
    # (validate-size-new-leader): a WARNING in a syscall's body is titled by the syscall, as syzbot does.
    ("warning-in-syscall-6.12.log", 2, "warning", "WARNING in perf_event_open", False),
    ("hung-task.log", 1, "hung task", "INFO: task hung in perf_event_exit_task", False),
    ("rcu-stall.log", 1, "rcu stall", "INFO: rcu detected stall in perf_output_put_handle", False),
    ("arm64-oops.log", 1, "bug", "BUG: unable to handle kernel NULL pointer dereference in perf_pending_irq", True),
    ("panic-alone.log", 2, "panic", "kernel panic: VFS: Unable to mount root fs on unknown-block(NUM,NUM)", True),
])
def test_each_kind_of_report_gets_its_title(log: str, line: int, kind: str, title: str, fatal: bool) -> None:
    found = splats.find((DATA / log).read_text())
    assert [(s.kind, s.title, s.fatal) for s in found] == [(kind, title, fatal)]
    assert found[0].console_line == line and not found[0].cut


def test_a_lock_order_report_on_a_lock_read_in_irq_is_read_too() -> None:
    # lockdep's state_name() adds "-READ" when the irq-safe lock was only read in the interrupt
    # ("SOFTIRQ-READ-safe -> SOFTIRQ-READ-unsafe lock order detected"): the same report, the same title.
    real = (DATA / "hardirq-lock-order-6.12.log").read_text()
    read = real.replace("HARDIRQ-safe -> HARDIRQ-unsafe", "SOFTIRQ-READ-safe -> SOFTIRQ-READ-unsafe")
    assert read != real
    assert [(s.kind, s.title) for s in splats.find(read)] == [("lockdep", "possible deadlock in evdev_pass_values")]


# Formats as the kernels print them (lockdep.c, lib/refcount.c, lib/list_debug.c, x86's traps.c, arm64's
# fault.c, mm/kfence), shortened to the lines a title is read from; the titles syzbot gives such reports.
TRACE = ["Call Trace:", " <TASK>", " dump_stack_lvl+0x5d/0x80", " _raw_spin_unlock+0x1b/0x40",
         " send_sigio+0x6e/0x120", " kill_fasync+0x7b/0x100", " </TASK>"]
FORMATS = {
    "hung in I/O wait (7.x)": (["INFO: task kworker/0:1:12 blocked in I/O wait for more than 122 seconds.",
                                "Call Trace:", " __schedule+0x1c/0x30", " io_schedule+0x10/0x20",
                                " folio_wait_bit_common+0x20/0x40", " ext4_sync_file+0x1c/0x30",
                                " vfs_fsync_range+0x1c/0x30"], "hung task", "INFO: task hung in ext4_sync_file"),
    "corrupted stack end": (["Kernel panic - not syncing: corrupted stack end detected inside scheduler",
                             "Call Trace:", " schedule+0x1c/0x30", " foo_loop+0x1c/0x30", " bar_ioctl+0x1c/0x30",
                             " vfs_ioctl+0x1c/0x30", " __x64_sys_ioctl+0x1c/0x30"], "panic",
                            "kernel panic: corrupted stack end in bar_ioctl"),
    "still held by a task whose name has a space": (["WARNING: my prog/42 still has locks held!",
                                                     " #0: ffffffc008b6ba28 (m){+.+.}-{3:3}, at: foo_ioctl+0x1c/0x24"],
                                                    "lockdep", "WARNING: still has locks held in foo_ioctl"),
    "still has locks held": (["====================================", "WARNING: init/24 still has locks held!",
                              "6.1.192+ #1 Not tainted", "1 lock held by init/24:",
                              " #0: ffffffc008b6ba28 (lkdtm_second){+.+.}-{3:3}, at: lkdtm_HELD+0x1c/0x24",
                              "stack backtrace:", "Call trace:", " debug_check_no_locks_held+0x90/0x9c",
                              " do_exit+0x940/0xd64"], "lockdep", "WARNING: still has locks held in lkdtm_HELD"),
    "invalid wait context": (["=============================", "[ BUG: Invalid wait context ]",
                              "init/24 is trying to lock:", "ffffff800257d7c0 (&child->perf_event_mutex){....}-{3:3}, "
                              "at: perf_event_exit_task+0x38/0x200", "stack backtrace:", "Call trace:",
                              " dump_stack+0x18/0x30", " __lock_acquire+0x5c8/0x1814", " lock_acquire+0x268/0x398",
                              " __mutex_lock+0x138/0x4ac", " mutex_lock_nested+0x24/0x34",
                              " perf_event_exit_task+0x38/0x200", " do_exit+0x424/0xd64"],
                             "lockdep", "WARNING: locking bug in perf_event_exit_task"),
    # no syzkaller format: the line is the title, its address ADDR (a panic's reason keeps what it says)
    "arm64 write to read-only memory": (["Unable to handle kernel write to read-only memory at virtual address "
                                         "ffff8000807677e0", "Internal error: Oops: 000000009600004f [#1] SMP",
                                         "pc : lkdtm_WRITE_RO+0x30/0x48"],
                                        "bug", "Unable to handle kernel write to read-only memory at virtual "
                                        "address ADDR"),
    # syzkaller's panic formats, and its replacements of what differs between occurrences
    "stack protector": (["Kernel panic - not syncing: stack-protector: Kernel stack is corrupted in: "
                         "lkdtm_CORRUPT_STACK+0x8c/0x8c"], "panic", "kernel panic: stack is corrupted in "
                                                                    "lkdtm_CORRUPT_STACK"),
    "killed init": (["Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b"], "panic",
                    "kernel panic: Attempted to kill init!"),
    "panic naming a line, an offset, a CPU and a number": (
        ["Kernel panic - not syncing: bad thing at fs/x.c:12 in foo+0x1c/0x40 on CPU#3 after 250 tries"], "panic",
        "kernel panic: bad thing at fs/x.c:LINE in foo on CPU after NUM tries"),
    "bad unlock balance": (["WARNING: bad unlock balance detected!", "-------------------------------------",
                            "provoke/90 is trying to release lock (&f->f_owner.lock) at:",
                            "[<ffffffff81234567>] _raw_read_unlock_irqrestore+0x1b/0x40",
                            "but there are no more locks to release!", "stack backtrace:", *TRACE],
                           "lockdep", "WARNING: bad unlock balance in send_sigio"),
    "circular": (["WARNING: possible circular locking dependency detected", "provoke/90 is trying to acquire lock:",
                  "ffff8880 (&new->fa_lock){....}-{2:2}, at: kill_fasync+0x40/0x100", "",
                  "but task is already holding lock:",
                  "ffff8881 (&f->f_owner.lock){....}-{2:2}, at: send_sigio+0x20/0x120", "",
                  "the existing dependency chain (in reverse order) is:", "-> #1 (&f->f_owner.lock){....}-{2:2}:",
                  "       _raw_read_lock+0x1b/0x40", "       f_getown+0x1c/0x60"],
                 "lockdep", "possible deadlock in kill_fasync"),
    "circular, taken in locking": (["WARNING: possible circular locking dependency detected",
                                    "provoke/90 is trying to acquire lock:",
                                    "ffff8880 ((console_sem).lock){-.-.}, at: down_trylock+0x13/0x70", "",
                                    "but task is already holding lock:",
                                    "ffff8881 (&ctx->lock){-.-.}, at: perf_event_exit_task+0x17e/0x300"],
                                   "lockdep", "possible deadlock in perf_event_exit_task"),
    "inconsistent": (["WARNING: inconsistent lock state", "{IN-HARDIRQ-W} state was registered at:",
                      "  lock_acquire+0xc4/0x2c0", "  evdev_pass_values+0x33/0x1a0", "stack backtrace:",
                      "Call Trace:", " dump_stack_lvl+0x5d/0x80", " mark_lock+0x1a0/0x300", " f_getown+0x1c/0x60"],
                     "lockdep", "inconsistent lock state in f_getown"),
    "held lock freed": (["WARNING: held lock freed!", "provoke/90 is freeing memory ffff-ffff, with a lock still held there!",
                         "ffff8880 (&ctx->lock){+.+.}-{2:2}, at: perf_event_release_kernel+0x30/0x300",
                         "stack backtrace:", *TRACE], "lockdep", "WARNING: held lock freed in perf_event_release_kernel"),
    "lock held to user space": (["WARNING: lock held when returning to user space!",
                                 "provoke/90 is leaving the kernel with locks still held!", "1 lock held by provoke/90:",
                                 " #0: ffff8880 (&ctx->mutex){+.+.}-{3:3}, at: perf_ioctl+0x30/0x90"],
                                "lockdep", "WARNING: lock held when returning to user space in perf_ioctl"),
    "refcount": (["refcount_t: addition on 0; use-after-free.",
                  "WARNING: CPU: 0 PID: 90 at lib/refcount.c:25 refcount_warn_saturate+0x9c/0x140",
                  "RIP: 0010:refcount_warn_saturate+0x9c/0x140", "Call Trace:", " <TASK>",
                  " perf_mmap+0x2a0/0x700", " mmap_region+0x2d0/0x9c0", "---[ end trace 0000000000000000 ]---"],
                 "warning", "WARNING: refcount bug in perf_mmap"),
    "list corruption": (["list_add corruption. prev->next should be next (ffff8880), but was 0000. (prev=ffff8880).",
                         "kernel BUG at lib/list_debug.c:32!", "invalid opcode: 0000 [#1] PREEMPT SMP NOPTI",
                         "RIP: 0010:__list_add_valid_or_report+0x80/0xa0", "Call Trace:", " <TASK>",
                         " fasync_insert_entry+0x90/0x100", " perf_fasync+0x40/0x80",
                         "---[ end trace 0000000000000000 ]---"],
                        "bug", "BUG: corrupted list in fasync_insert_entry"),
    "6.1 invalid opcode": (["invalid opcode: 0000 [#1] PREEMPT SMP NOPTI", "CPU: 0 PID: 90 Comm: provoke",
                            "RIP: 0010:perf_event_wakeup+0x10/0x80", "Call Trace:", " perf_pending_irq+0x60/0x100",
                            "---[ end trace 0000000000000000 ]---"], "bug", "invalid opcode in perf_event_wakeup"),
    "6.12 invalid opcode": (["Oops: invalid opcode: 0000 [#1] PREEMPT SMP NOPTI", "CPU: 0 UID: 0 PID: 90 Comm: provoke",
                             "RIP: 0010:perf_event_wakeup+0x10/0x80", "---[ end trace 0000000000000000 ]---"],
                            "bug", "invalid opcode in perf_event_wakeup"),
    "6.1 divide error": (["divide error: 0000 [#1] PREEMPT SMP NOPTI", "RIP: 0010:perf_calculate_period+0x90/0x100",
                          "---[ end trace 0000000000000000 ]---"], "bug", "divide error in perf_calculate_period"),
    "x86 paging request": (["BUG: unable to handle page fault for address: ffffc90000a3f000",
                            "#PF: supervisor read access in kernel mode", "PGD 100067 P4D 100067 PUD 0",
                            "Oops: 0000 [#1] PREEMPT SMP NOPTI", "RIP: 0010:perf_output_copy+0x40/0xa0",
                            "---[ end trace 0000000000000000 ]---"],
                           "bug", "BUG: unable to handle kernel paging request in perf_output_copy"),
    "scheduling while atomic": (["BUG: scheduling while atomic: provoke/90/0x00000002", "Call Trace:", " <TASK>",
                                 " dump_stack_lvl+0x5d/0x80", " __schedule_bug+0x50/0x70", " __schedule+0x9a0/0xc00",
                                 " schedule+0x30/0xa0", " perf_poll+0x60/0x100"],
                                "bug", "BUG: scheduling while atomic in perf_poll"),
    "kfence": (["==================================================================",
                "BUG: KFENCE: use-after-free read in perf_output_put_handle+0x30/0x100", "",
                "Use-after-free read at 0x00000000 (in kfence-#12):", " perf_output_put_handle+0x30/0x100",
                "=================================================================="],
               "kfence", "KFENCE: use-after-free read in perf_output_put_handle"),
    "warning without file": (["WARNING: CPU: 0 PID: 90 at perf_event_wakeup+0x1c/0x80",
                              "RIP: 0010:perf_event_wakeup+0x1c/0x80", "---[ end trace 0000000000000000 ]---"],
                             "warning", "WARNING in perf_event_wakeup"),
}


@pytest.mark.parametrize("name", list(FORMATS))
def test_each_format_is_one_report_titled_as_syzbot_titles_it(name: str) -> None:
    lines, kind, title = FORMATS[name]
    console = "\n".join(f"[   12.{i:06d}] {line}" for i, line in enumerate(lines))
    assert [(s.kind, s.title) for s in splats.find(console)] == [(kind, title)]


def test_an_arm64_abort_block_of_any_length_is_one_report() -> None:
    # 6.12's mem_abort_decode() and show_pte() print 14 lines between "Unable to handle" and "Internal error".
    lines = (DATA / "arm64-oops.log").read_text().split("\n")
    block = [f"[   15.000250]   {field}" for field in ("EC = 0x25: DABT (current EL), IL = 32 bits",
                                                     "SET = 0, FnV = 0", "EA = 0, S1PTW = 0", "FSC = 0x05",
                                                     "Data abort info:", "ISV = 0, ISS = 0x00000005",
                                                     "CM = 0, WnR = 0, TnD = 0, TagAccess = 0",
                                                     "GCS = 0, Overlay = 0, DirtyBit = 0, Xs = 0",
                                                     "user pgtable: 4k pages, 48-bit VAs", "[0000000000000008] pgd=0")]
    longer = "\n".join(lines[:3] + block + lines[3:])
    assert [s.title for s in splats.find(longer)] == [
        "BUG: unable to handle kernel NULL pointer dereference in perf_pending_irq"]


def test_a_title_is_cleaned_as_go_cleans_it_byte_by_byte() -> None:
    # syzkaller's classes are ASCII and its 120 are bytes: "é12" is a number after a non-word byte, and goes
    console = "[    1.000000] Kernel panic - not syncing: \u00e912 " + "x" * 200
    (splat,) = splats.find(console)
    assert splat.title == "kernel panic: NUM " + "x" * (120 - len("kernel panic: \u00e9NUM ".encode()))


def test_a_report_cut_off_mid_way_still_counts_and_says_so() -> None:
    (splat,) = splats.find((DATA / "cut.log").read_text())  # the 2025 WARNING format, then the console ends
    assert (splat.title, splat.cut) == ("WARNING in perf_output_wakeup", True)


def test_ordinary_kernel_lines_are_no_report() -> None:
    quiet = "[    0.000000] Linux version 6.12.0\n[    2.1] perf: interrupt took too long (2505 > 2500)\n"
    assert splats.find(quiet) == []


def guest_console(token: str, body: list[str]) -> str:
    """A console: the guest's framed lines (payloads) with kernel lines (starting with '[') between them."""
    out, seq = [], 0
    for line in body:
        if line.startswith("["):
            out.append(line + "\n")
        else:
            out.append(frame_line(token, seq, line))
            seq += 1
    return "".join(out)


def test_a_report_interleaved_with_frames_is_read_whole_and_given_to_the_case_that_ran() -> None:
    warning = (DATA / "warning.log").read_text().splitlines()
    body = ["KTAP version 1", "1..2", "# sigwake.tainted=0", "# sigwake.pass=root",
            "# sigwake.start=watermark_poll", "# sigwake.case=watermark_poll", "# sigwake.exit=0",
            "ok 1 watermark_poll.watermark_poll [root run 1]",
            "# sigwake.start=watermark_sigio", "# sigwake.case=watermark_sigio", *warning[:6],
            "    KTAP version 1",  # a frame torn into the report: the report goes on around it
            *warning[6:], "# sigwake.exit=0", "# sigwake.tainted=512", "ok 2 watermark_sigio.watermark_sigio [root run 1]",
            "# sigwake.done=2"]
    text = guest_console("c0ffee", body)
    unframed = console.unframe(text, "c0ffee")
    runs = ktap.parse_runner(unframed.payloads, unframed.lines).runs
    (splat,) = attribute(splats.find(text), runs)
    assert splat.title == "WARNING in perf_event_wakeup"
    assert "SIGWAKE" not in splat.report and "end trace" in splat.report
    assert (splat.privilege, splat.case) == ("root", "watermark_sigio")
    assert (splat.tainted_before, splat.tainted_after) == ("0", "512")  # TAINT_WARN


def read_back(body: list[str], *reports: str) -> list:
    """The reports of a guest console whose frames are `body`, the reports' lines where "REPORT" lines stand."""
    left = list(reports)
    lines = [kernel for line in body for kernel in (left.pop(0).splitlines() if line == "REPORT" else [line])]
    text = guest_console("c0ffee", lines)
    unframed = console.unframe(text, "c0ffee")
    report = ktap.parse_runner(unframed.payloads, unframed.lines)
    return attribute(splats.find(text), report.runs, report.peers)


FIRST_RUN = ["KTAP version 1", "1..2", "# sigwake.pass=root", "# sigwake.start=watermark_poll",
             "# sigwake.case=watermark_poll", "# sigwake.exit=0", "ok 1 watermark_poll.watermark_poll [root run 1]"]
SECOND_START = ["# sigwake.start=watermark_sigio", "# sigwake.case=watermark_sigio"]


def test_a_report_pid_1_prints_after_a_runs_result_is_between_cases() -> None:
    # The guest's init (PID 1) runs between the programs: a panic it hits there is no finished case's.
    (splat,) = read_back([*FIRST_RUN, "REPORT", *SECOND_START], (DATA / "panic-alone.log").read_text())
    assert (splat.privilege, splat.case, splat.task) == (None, None, "swapper/0/1")
    assert splat.where() == "between [root] watermark_poll and [root] watermark_sigio"


def test_a_report_between_runs_that_names_the_finished_runs_program_is_that_runs() -> None:
    # A kernel that prints late (rt kernels print from a thread), or a task the run left behind: its Comm says
    # it is the finished run's. Once the next run has started, the report is that run's whatever comm it names
    # (a reproducer chooses its comm: it cannot hand its report to another case).
    body = ["KTAP version 1", "1..2", "# sigwake.pass=root", *SECOND_START, "# sigwake.exit=0",
            "ok 1 watermark_sigio.watermark_sigio [root run 1]", "REPORT", "# sigwake.start=watermark_poll",
            "# sigwake.case=watermark_poll", "REPORT"]
    warning = (DATA / "warning.log").read_text()
    assert [(s.case, s.task) for s in read_back(body, warning, warning)] == [
        ("watermark_sigio", "watermark_sigio/241"), ("watermark_poll", "watermark_sigio/241")]


def test_a_report_is_placed_by_the_kernels_clock_where_the_runs_carry_it() -> None:
    # An rt kernel prints from a thread: the WARNING (printed at 12.104211, while watermark_sigio ran) reaches
    # the console after the next run's start frame; by line it would be watermark_poll's, whose start came later.
    body = ["KTAP version 1", "1..2", "# sigwake.pass=root", *SECOND_START, "# sigwake.printk_start=12.000000",
            "# sigwake.printk_end=12.200000", "# sigwake.exit=0", "ok 1 watermark_sigio.watermark_sigio [root run 1]",
            "# sigwake.start=watermark_poll", "# sigwake.case=watermark_poll", "# sigwake.printk_start=12.300000",
            "REPORT"]
    late = (DATA / "warning.log").read_text().replace("PID: 241", "PID: 7").replace("Comm: watermark_sigio", "Comm: ktimers")
    (splat,) = read_back(body, late)
    assert (splat.case, splat.task, splat.printk_s) == ("watermark_sigio", "ktimers/7", 12.104398)
    # Printed after the first run ended and before the next began, by the clock: between them.
    (between,) = read_back(body, late.replace("[   12.10", "[   12.25"))
    assert between.case is None and between.where() == "between [root] watermark_sigio and [root] watermark_poll"


def test_an_oops_after_a_report_that_has_none_is_a_report_of_its_own() -> None:
    # "BUG: sleeping function called from invalid context" prints no Oops and no end line: a fault later on is
    # another report. A fault's own Oops line comes once, and a frame printed between them does not split it.
    sleeping = ["[    5.000000] BUG: sleeping function called from invalid context at kernel/locking/mutex.c:580",
                "[    5.000001] Call Trace:", "[    5.000002]  perf_poll+0x60/0x100"]
    gp = ["[    6.000000] Oops: general protection fault, probably for non-canonical address 0xdead: 0000 [#1]",
          "[    6.000001] RIP: 0010:perf_event_wakeup+0x10/0x80", "[    6.000002] ---[ end trace 0000000000000000 ]---"]
    found = splats.find("\n".join(sleeping + [f"[    5.5] line {i}" for i in range(20)] + gp))
    assert [s.title for s in found] == ["BUG: sleeping function called from invalid context in perf_poll",
                                        "general protection fault in perf_event_wakeup"]
    real = (DATA / "null-deref-6.12-smp.log").read_text().splitlines()
    torn = "\n".join(real[:4] + [frame_line("ab", 0, "KTAP version 1").rstrip("\n")] + real[4:])
    assert [s.title for s in splats.find(torn)] == [
        "BUG: unable to handle kernel NULL pointer dereference in perf_output_begin"]


def test_a_report_while_an_upstream_selftest_ran_is_the_selftests() -> None:
    body = [*FIRST_RUN, "# sigwake.peer=peer-watermark_signal", "REPORT"]
    (splat,) = read_back(body, (DATA / "panic-alone.log").read_text())
    assert splat.case is None and splat.where() == "during the upstream selftest watermark_signal"


def test_a_hung_task_or_a_stall_says_it_may_be_an_earlier_cases() -> None:
    (hung,) = read_back([*FIRST_RUN, *SECOND_START, "REPORT"], (DATA / "hung-task.log").read_text())
    assert hung.where() == "[root] watermark_sigio; a hung task is reported late: it may belong to an earlier case"


def test_a_report_before_any_program_belongs_to_the_boot() -> None:
    text = (DATA / "warning.log").read_text() + guest_console("c0ffee", ["KTAP version 1", "# sigwake.start=x"])
    unframed = console.unframe(text, "c0ffee")
    (splat,) = attribute(splats.find(text), ktap.parse_runner(unframed.payloads, unframed.lines).runs)
    assert splat.case is None and splat.where() == "outside every case"


def test_the_committed_cloud_kernel_crash_is_read_back_from_its_console_log() -> None:
    text = (CRASH / "6.12.95+deb12-cloud-amd64.console.log").read_text()
    unframed = console.unframe(text, console.likeliest_token(text))
    (splat,) = attribute(splats.find(text), ktap.parse_runner(unframed.payloads, unframed.lines).runs)
    assert splat.title == "PANIC: double fault in alloc_pid" and splat.fatal
    assert (splat.privilege, splat.case) == ("user-paranoid1", "set_output_sigio_fasync_on_source")
    assert "alloc_pid" in splat.report and "Kernel panic - not syncing" in splat.report


def test_a_kernel_line_inside_a_frame_is_read_and_the_frame_mended() -> None:
    # As a 6.12 guest printed it: "random: crng init done" landed inside a frame, before the frame's newline.
    # Here a WARNING's first line lands in one frame and a plain message splits another across two lines.
    body = [frame_line("ab", 0, "# sigwake.start=watermark_sigio").rstrip("\n"),
            frame_line("ab", 1, "# sigwake.case=watermark_sigio").rstrip("\n") +
            "[   14.972385] WARNING: CPU: 0 PID: 9 at kernel/events/core.c:6841 perf_event_wakeup+0x8e/0xa0\n",
            "[   14.972390] ---[ end trace 0000000000000000 ]---",
            frame_line("ab", 2, "# sigwake.exit=0")[:30] + "[   14.98] random: crng init done\n" +
            frame_line("ab", 2, "# sigwake.exit=0")[30:].rstrip("\n"),
            frame_line("ab", 3, "ok 1 watermark_sigio.watermark_sigio [root run 1]").rstrip("\n")]
    text = "\n".join(body) + "\n"
    unframed = console.unframe(text, "ab")
    assert unframed.payloads == ["# sigwake.start=watermark_sigio", "# sigwake.case=watermark_sigio",
                                 "# sigwake.exit=0", "ok 1 watermark_sigio.watermark_sigio [root run 1]"]
    assert (unframed.rejected, unframed.missing) == (0, [])
    (splat,) = attribute(splats.find(text), ktap.parse_runner(unframed.payloads, unframed.lines).runs)
    assert (splat.title, splat.case) == ("WARNING in perf_event_wakeup", "watermark_sigio")


def test_a_report_a_reproducer_prints_inside_its_frames_is_never_the_kernels() -> None:
    # A frame whose CRC holds over its whole payload is as the guest framed it: a reproducer's own text, even
    # one shaped like a kernel report, with a timestamp; only a line the kernel printed into a frame breaks it.
    forged = ["[    1.000000] WARNING: CPU: 0 PID: 1 at f+0x1/0x2",
              "# [    1.000000] BUG: kernel NULL pointer dereference, address: 0000000000000000",
              "[    1.000001] Kernel panic - not syncing: Fatal exception"]
    text = "".join(frame_line("ab", seq, line) for seq, line in enumerate(forged))
    assert splats.find(text) == []
    torn = frame_line("ab", 0, "# sigwake.exit=0").rstrip("\n") + "[    2.000000] WARNING: CPU: 0 PID: 9 at " \
        "kernel/events/core.c:6841 perf_event_wakeup+0x8e/0xa0\n"
    assert [s.title for s in splats.find(text + torn)] == ["WARNING in perf_event_wakeup"]



def test_a_line_the_kernel_printed_inside_one_of_its_records_is_never_a_report() -> None:
    # A path with newlines, exec'd with no argv: the kernel prints it in one record, and the console shows each
    # of its lines behind the record's timestamp. The init read the record off /dev/kmsg, where the newline is
    # escaped, and said which lines continue it (repro/guest/printk_clock.h).
    record = ["[    5.960677] process 'forge' launched '/tmp/a",
              "[    5.960677] WARNING: CPU: 0 PID: 1 at forged_exec+0x1/0x2",
              "[    5.960677] ' with NULL argv: empty string added"]
    real = "[    5.960677] WARNING: CPU: 0 PID: 9 at kernel/events/core.c:6841 perf_event_wakeup+0x8e/0xa0"
    said = ["KTAP version 1", "# sigwake.printk_continued=5.960677 WARNING: CPU: 0 PID: 1 at forged_exec+0x1/0x2",
            "# sigwake.printk_continued=5.960677 ' with NULL argv: empty string added"]
    text = "".join(frame_line("ab", seq, line) for seq, line in enumerate(said)) + "\n".join([*record, real]) + "\n"
    unframed = console.unframe(text, "ab")
    continued = ktap.parse_runner(unframed.payloads, unframed.lines).continued
    assert continued == [("5.960677", "WARNING: CPU: 0 PID: 1 at forged_exec+0x1/0x2"),
                         ("5.960677", "' with NULL argv: empty string added")]
    assert [s.title for s in splats.find(text, frozenset(continued))] == ["WARNING in perf_event_wakeup"]
    assert [s.title for s in splats.find(text)] == ["WARNING in forged_exec", "WARNING in perf_event_wakeup"]
    # /dev/kmsg's escapes undone as the console shows the bytes: a backslash, a tab, UTF-8
    escaped = ktap.parse_runner(["KTAP version 1", r"# sigwake.printk_continued=1.000000 a\x5cb\x09c \xc3\xa9"])
    assert escaped.continued == [("1.000000", "a\\b\tc \u00e9")]


def test_a_reports_words_start_its_line_or_follow_a_detectors_prefix() -> None:
    # Anywhere else they are a string the kernel quoted, which a process chose (an exec'd path, no newline)
    quoted = ["[    5.9] process 'forge' launched '/tmp/WARNING: CPU: 0 PID: 1 at forged+0x1/0x2' with NULL argv",
              "[    5.9] int3: 0000 invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE), order=0",
              "[    5.9] Oops: 0000 (42) used greatest stack depth: 11328 bytes left",
              "[    5.9] traps: UBSAN: a in b[42] trap int3 ip:401000 sp:7ffc00000000 error:0 in forge[401000+1000]"]
    assert splats.find("\n".join(quoted)) == []
    kernels = ["[    6.0] traps: PANIC: double fault, error_code: 0x0",
               "[    7.0][  T123] WARNING: CPU: 0 PID: 9 at kernel/events/core.c:1 perf_event_wakeup+0x1/0x2",
               "[    8.0] Oops: general protection fault, probably for non-canonical address 0xdead: 0000 [#1]",
               "[    8.1] RIP: 0010:perf_event_wakeup+0x10/0x80",
               "[    9.0] Oops: segment-related general protection fault: beec [#2] PREEMPT SMP KASAN PTI",
               "[    9.1] RIP: 0010:perf_event_wakeup+0x10/0x80"]
    assert [s.title for s in splats.find("\n".join(kernels))] == [
        "PANIC: double fault in corrupted", "WARNING in perf_event_wakeup", "general protection fault in perf_event_wakeup",
        "general protection fault in perf_event_wakeup"]
    # a continued line the kernel ended with a carriage return (the reader drops them) is still its own
    said = ktap.parse_runner(["KTAP version 1", r"# sigwake.printk_continued=5.960677 WARNING: CPU: 0 PID: 1 at "
                              r"f+0x1/0x2\x0d"]).continued
    line = "[    5.960677] WARNING: CPU: 0 PID: 1 at f+0x1/0x2\r"
    assert splats.find(line) != [] and splats.find(line, frozenset(said)) == []

def test_a_run_the_kernel_cut_off_has_no_taint_after_it() -> None:
    body = ["KTAP version 1", "1..1", "# sigwake.tainted=0", "# sigwake.pass=root", "# sigwake.start=watermark_sigio",
            "# sigwake.case=watermark_sigio"]
    text = guest_console("c0ffee", body) + (DATA / "warning.log").read_text()  # and then nothing: it died
    unframed = console.unframe(text, "c0ffee")
    (splat,) = attribute(splats.find(text), ktap.parse_runner(unframed.payloads, unframed.lines).runs)
    assert (splat.tainted_before, splat.tainted_after) == ("0", "")


def test_a_line_that_begins_with_a_tasks_name_is_never_a_report() -> None:
    # A task names itself (prctl(PR_SET_NAME), 15 bytes); the kernel begins some lines with that name and its pid.
    named = ["[    3.100000] UBSAN: a in b[42]: segfault at 0 ip 0000000000401000 sp 00007ffc00000000 error 6",
             "[    3.100001] BUG: x in y[43] is installing a program with bpf_probe_write_user helper"]
    assert splats.find("\n".join(named)) == []
    real = "[    3.2] UBSAN: array-index-out-of-bounds in kernel/events/core.c:12:3"
    assert [s.kind for s in splats.find(real)] == ["ubsan"]


def test_a_soft_lockup_is_named_by_where_its_work_was_entered_with_or_without_lockdep() -> None:
    # The golden 6.12 console's first soft lockup, then the same as a kernel without lockdep prints it (no
    # "hardirqs last enabled at ... asm_sysvec_apic_timer_interrupt" lines): the loop's entry, full_proxy_write.
    golden = Path(__file__).parent / "data" / "kernel-reports" / "6.12-amd64" / "SOFTLOCKUP.log"
    first = splats.find(golden.read_text())[0].report
    plain = "\n".join(line for line in first.split("\n") if not line.startswith(("irq event", "hardirqs", "softirqs")))
    assert plain != first
    assert [s.title for s in splats.find(plain)] == ["BUG: soft lockup in full_proxy_write"]
    # A loop whose first frame is itself where work is entered is named by it (syzkaller's rule).
    worker = ["watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [kworker/0:1:12]", "RIP: 0010:process_one_work+0x1/0x2",
              "Call Trace:", " <TASK>", " worker_thread+0x1/0x2", " kthread+0x1/0x2", " ret_from_fork+0x1/0x2"]
    assert [s.title for s in splats.find("\n".join(worker))] == ["BUG: soft lockup in process_one_work"]


def test_an_invalid_free_in_a_freeing_helper_is_its_callers() -> None:
    report = ["BUG: KASAN: double-free or invalid-free in kfree_sensitive+0x1/0x2", "", "Call Trace:", " <TASK>",
              " kasan_report_invalid_free+0x1/0x2", " kfree_sensitive+0x1/0x2", " perf_event_free_task+0x1/0x2",
              " </TASK>", "=" * 66]
    assert [s.title for s in splats.find("\n".join(report))] == ["KASAN: invalid-free in perf_event_free_task"]


def test_a_hard_lockup_is_named_by_the_locked_cpus_own_dump_and_by_no_other_cpus() -> None:
    # The golden 6.12 amd64 console: the buddy detector on CPU 1 makes CPU 0 print its NMI backtrace.
    golden = (Path(__file__).parent / "data" / "kernel-reports" / "6.12-amd64" / "HARDLOCKUP.log").read_text()
    lines = golden.split("\n")
    assert [s.title for s in splats.find(golden)] == ["BUG: hard lockup in lkdtm_HARDLOCKUP"]
    own = lines.index(next(line for line in lines if "NMI backtrace for cpu 0" in line))
    detected = next(i for i, line in enumerate(lines) if "Watchdog detected hard LOCKUP" in line)
    panic = next(i for i, line in enumerate(lines) if "Kernel panic - not syncing" in line)
    # With hardlockup_all_cpu_backtrace the detecting CPU's own NMI backtrace can come first: never the title.
    theirs = ["[    3.672] NMI backtrace for cpu 1", "[    3.672] CPU: 1 UID: 0 PID: 0 Comm: swapper/1",
              "[    3.672] RIP: 0010:default_idle+0x13/0x15", "[    3.672] Call Trace:", "[    3.672]  do_idle+0x92/0x130"]
    all_cpus = lines[:own] + theirs + lines[own:]
    assert [s.title for s in splats.find("\n".join(all_cpus))] == ["BUG: hard lockup in lkdtm_HARDLOCKUP"]
    # A detector on the locked CPU itself (perf's NMI watchdog) prints its registers, no NMI backtrace line.
    perf = lines[:own] + lines[own + 1:]
    assert [s.title for s in splats.find("\n".join(perf))] == ["BUG: hard lockup in lkdtm_HARDLOCKUP"]
    # The locked CPU never printed (arm64 without pseudo-NMI), with or without the panic after it
    # (hardlockup_panic=0): the other CPUs' stacks around it are not where it loops.
    silent = lines[:detected + 1] + theirs + lines[panic:]
    assert [s.title for s in splats.find("\n".join(silent))] == ["BUG: hard lockup in corrupted"]
    assert [s.title for s in splats.find("\n".join(lines[:detected + 1] + theirs))] == ["BUG: hard lockup in corrupted"]
