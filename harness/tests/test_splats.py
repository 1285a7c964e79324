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
    ("hung-task.log", 1, "hung task", "INFO: task hung in perf_event_exit_task", False),
    ("rcu-stall.log", 1, "rcu stall", "INFO: rcu detected stall in perf_output_put_handle", False),
    ("arm64-oops.log", 1, "bug", "BUG: unable to handle kernel NULL pointer dereference in perf_pending_irq", True),
    ("panic-alone.log", 2, "panic", "kernel panic: VFS: Unable to mount root fs on unknown-block(0,0)", True),
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


def test_a_report_before_any_program_belongs_to_the_boot() -> None:
    text = (DATA / "warning.log").read_text() + guest_console("c0ffee", ["KTAP version 1", "# sigwake.start=x"])
    unframed = console.unframe(text, "c0ffee")
    (splat,) = attribute(splats.find(text), ktap.parse_runner(unframed.payloads, unframed.lines).runs)
    assert splat.case is None and splat.where() == "outside every case"


def test_the_committed_cloud_kernel_crash_is_read_back_from_its_console_log() -> None:
    text = (CRASH / "6.12.95+deb12-cloud-amd64.console.log").read_text()
    unframed = console.unframe(text, console.likeliest_token(text))
    (splat,) = attribute(splats.find(text), ktap.parse_runner(unframed.payloads, unframed.lines).runs)
    assert splat.title == "PANIC: double fault in kmem_cache_alloc_noprof" and splat.fatal
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


def test_a_run_the_kernel_cut_off_has_no_taint_after_it() -> None:
    body = ["KTAP version 1", "1..1", "# sigwake.tainted=0", "# sigwake.pass=root", "# sigwake.start=watermark_sigio",
            "# sigwake.case=watermark_sigio"]
    text = guest_console("c0ffee", body) + (DATA / "warning.log").read_text()  # and then nothing: it died
    unframed = console.unframe(text, "c0ffee")
    (splat,) = attribute(splats.find(text), ktap.parse_runner(unframed.payloads, unframed.lines).runs)
    assert (splat.tainted_before, splat.tainted_after) == ("0", "")
