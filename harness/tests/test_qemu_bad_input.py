"""Bad input under QEMU: each gives a clear message and a recorded verdict, and
no finished result is lost."""

from __future__ import annotations

import json
import os
import re
import signal
import threading
import time
from pathlib import Path

from sigwake.programs import initramfs
from sigwake.commands.cli import REPO
from sigwake.targets.options import RunOptions
from sigwake.targets.qemu_run import run_qemu
from sigwake.kernels.kernels import Kernel
from sigwake.commands.orchestrator import RunConfig, run_kernels
from sigwake.core.progress import Progress
from image_files import corrupt_bzimage
from sigwake.targets.qemu import Accel
from sigwake.core.exit_codes import COULD_NOT_TEST
from sigwake.core.model import Runner
from sigwake.core.verdicts import Verdict
from sigwake.judge.gate import of_run


def test_a_corrupt_image_is_recorded_as_boot_failed(tmp_path: Path, cache_root: Path) -> None:
    garbage = tmp_path / "vmlinuz-garbage"
    garbage.write_bytes(corrupt_bzimage())
    results = tmp_path / "results"
    summary = run_kernels(RunConfig(REPO, REPO / "build", cache_root, results, (str(garbage),)), Progress(quiet=True))
    (result,) = summary.results
    assert result.boot.status == "boot-failed"
    assert "QEMU exited" in result.boot.detail
    assert {r.verdict for r in result.reproducers} == {Verdict.BOOT_FAILED}
    recorded = json.loads((results / f"{result.kernel_id}.json").read_text())
    assert recorded["origin"]["kind"] == "file" and recorded["boot"]["status"] == "boot-failed"


def test_a_missing_image_is_named_and_the_other_kernels_still_run(tmp_path: Path, cache_root: Path,
                                                                   kernel_6_1: Kernel) -> None:
    results = tmp_path / "results"
    specs = (str(tmp_path / "no-such-vmlinuz"), str(kernel_6_1.image))
    summary = run_kernels(RunConfig(REPO, REPO / "build", cache_root, results, specs), Progress(quiet=True))
    assert len(summary.failures) == 1 and "no kernel image" in summary.failures[0]
    (result,) = summary.results
    assert result.boot.status == "ok"
    assert (results / f"{result.kernel_id}.json").exists()


def test_a_kernel_that_panics_is_recorded_with_the_panic(tmp_path: Path, kernel_6_1: Kernel, accel: Accel) -> None:
    # An /init the kernel cannot execute: it panics with "No working init found".
    initrd = initramfs.write([initramfs.executable("init", b"not an executable\n")], tmp_path / "bad.cpio")
    got = run_qemu(kernel_6_1, initrd, ["watermark_sigio"], RunOptions(accel), tmp_path / "console.log")
    assert got.boot.status == "boot-failed"
    assert "Kernel panic" in got.boot.detail
    assert got.reproducers[0].verdict is Verdict.BOOT_FAILED


def test_a_boot_past_its_timeout_is_killed_and_recorded(tmp_path: Path, kernel_6_1: Kernel, initrd: Path,
                                                        accel: Accel) -> None:
    config = RunOptions(accel, boot_timeout_s=1.0)  # far too short for a TCG boot: QEMU is still going
    got = run_qemu(kernel_6_1, initrd, ["watermark_sigio"], config, tmp_path / "console.log")
    assert got.boot.status == "timeout" and "1 s" in got.boot.detail
    assert got.reproducers[0].verdict is Verdict.TIMEOUT


def test_a_silent_guest_is_killed_long_before_its_timeout(tmp_path: Path, test_programs: dict[str, Path],
                                                          kernel_6_1: Kernel, accel: Accel) -> None:
    # An init that never prints: the kernel is up, and nothing more will come.
    initrd = initramfs.write([initramfs.executable("init", test_programs["hang"].read_bytes())], tmp_path / "quiet.cpio")
    config = RunOptions(accel, boot_timeout_s=600.0, quiet_limit_s=8.0)
    got = run_qemu(kernel_6_1, initrd, ["watermark_sigio"], config, tmp_path / "console.log")
    assert got.boot.status == "timeout" and "silent for" in got.boot.detail, got.boot
    assert got.boot.seconds is not None and got.boot.seconds < 60
    assert got.reproducers[0].verdict is Verdict.TIMEOUT


def test_the_guest_kills_a_hung_reproducer_and_goes_on(tmp_path: Path, built, test_programs: dict[str, Path],
                                                       kernel_6_12: Kernel, accel: Accel) -> None:
    programs = {"a_hang": test_programs["hang"], "b_crash": test_programs["crash"],
                "c_watermark_poll": built.reproducers["watermark_poll"], "d_silent": test_programs["silent"],
                "e_liar": test_programs["liar"]}
    initrd = initramfs.write(initramfs.guest_entries(built.init, programs), tmp_path / "misbehaving.cpio")
    config = RunOptions(accel, repro_timeout_ms=1000, repeat=1, privileges=("root", "user-paranoid1"))
    got = run_qemu(kernel_6_12, initrd, sorted(programs), config, tmp_path / "console.log")
    assert got.boot.status == "ok", got.boot
    assert {r.privilege for r in got.reproducers} == {"root", "user-paranoid1"}
    by_name = {r.name: r for r in got.reproducers if r.privilege == "user-paranoid1"}
    assert by_name["a_hang"].verdict is Verdict.TIMEOUT
    assert by_name["a_hang"].duration_ms is not None and 1000 <= by_name["a_hang"].duration_ms < 5000
    assert by_name["b_crash"].verdict is Verdict.ERROR and "signal 11" in by_name["b_crash"].reason
    assert by_name["watermark_poll"].verdict is Verdict.DELIVERED  # its case name, whatever the file is called
    # A program that prints no case, or whose exit contradicts its verdict, is an error that says so.
    assert by_name["d_silent"].verdict is Verdict.ERROR and "exit 0" in by_name["d_silent"].reason
    assert by_name["liar"].verdict is Verdict.ERROR and "exit code 1 contradicts" in by_name["liar"].reason


def test_a_kernel_crash_mid_run_hides_nothing_the_rest_runs_in_a_fresh_boot(
        tmp_path: Path, built, test_programs: dict[str, Path], kernel_6_12: Kernel, accel: Accel) -> None:
    programs = {"a_sysrq_crash": test_programs["sysrq_crash"], "b_watermark_poll": built.reproducers["watermark_poll"]}
    initrd = initramfs.write(initramfs.guest_entries(built.init, programs), tmp_path / "crash.cpio")
    log = tmp_path / "console.log"
    got = run_qemu(kernel_6_12, initrd, sorted(programs),
                    RunOptions(accel, repeat=1, privileges=("root", "user-paranoid1")), log)
    (panic,) = got.splats
    assert (panic.title, panic.fatal) == ("kernel panic: sysrq triggered crash", True)
    assert (panic.privilege, panic.case) == ("root", "sysrq_crash")
    assert "Kernel panic - not syncing: sysrq triggered crash" in log.read_text().split("\n")[panic.console_line - 1]
    assert (got.boot.status, got.boot.boots) == ("boot-failed", 2)
    assert "went on in 1 fresh boot(s): boot 2: ok" in got.boot.detail and "=== sigwake: boot 2" in log.read_text()
    verdicts = {(r.privilege, r.name): r.verdict for r in got.reproducers}
    assert verdicts == {("root", "sysrq_crash"): Verdict.BOOT_FAILED,  # was running when the kernel died
                        ("root", "watermark_poll"): Verdict.DELIVERED,  # after it, in the fresh boot
                        ("root", "watermark_poll_rdnorm"): Verdict.DELIVERED,
                        ("root", "watermark_poll_without_ring"): Verdict.DELIVERED,
                        ("user-paranoid1", "sysrq_crash"): Verdict.UNSUPPORTED,  # uid 65534 may not write it
                        ("user-paranoid1", "watermark_poll"): Verdict.DELIVERED,
                        ("user-paranoid1", "watermark_poll_rdnorm"): Verdict.DELIVERED,
                        ("user-paranoid1", "watermark_poll_without_ring"): Verdict.DELIVERED}


def test_a_reproducer_cannot_forge_the_consoles_frames_nor_the_kernels_word(
        tmp_path: Path, built, test_programs: dict[str, Path], kernel_6_12: Kernel, accel: Accel) -> None:
    programs = {"a_forge": test_programs["forge"], "b_watermark_poll": built.reproducers["watermark_poll"]}
    initrd = initramfs.write(initramfs.guest_entries(built.init, programs), tmp_path / "forge.cpio")
    config = RunOptions(accel, repeat=1, privileges=("root", "user-paranoid2"))
    got = run_qemu(kernel_6_12, initrd, sorted(programs), config, tmp_path / "console.log")
    assert got.boot.status == "ok", got.boot
    forge = {r.privilege: r.evidence for r in got.reproducers if r.name == "forge"}
    assert set(forge) == {"root", "user-paranoid2"}
    for privilege, found in forge.items():  # root's run included: it keeps only perf's capabilities
        assert found["cmdline_token"] == 0 and found["token_file_readable"] == 0, (privilege, found)
        assert found["init_memory_readable"] == 0, (privilege, found)  # PID 1 is not dumpable, no CAP_SYS_PTRACE
        assert found["stdin_is_console"] == 0, (privilege, found)
        # no port at all: the keyboard controller's are evdev_sigio's alone (repro/guest/runner.cc)
        assert found["serial_ports_writable"] == 0 and found["keyboard_status_readable"] == 0, (privilege, found)
        # its /dev has no console, serial port or kmsg, and it cannot make one (repro/guest/confine.h)
        assert found["console_openable"] == 0 and found["serial_openable"] == 0, (privilege, found)
        assert found["forged_frames_written"] == 0 and found["kmsg_written"] == 0, (privilege, found)
        # syslog(2) and TIOCCONS need capabilities it lacks; the printk knobs and sysrq-trigger are read-only
        assert found["loglevel_changed"] == 0 and found["console_redirected"] == 0, (privilege, found)
        assert found["confinement_undone"] == 0, (privilege, found)
        # its listing asked for CAP_SYS_ADMIN: only a reviewed program is granted anything (runner.cc)
        assert found["cap_sys_admin"] == 0 and found["machine_written"] == 0, (privilege, found)
        assert found["report_named_child_segfaulted"] == 1, (privilege, found)
        assert found["exec_newline_report"] == 1, (privilege, found)
    assert got.boot.rejected_frames == 0
    assert any("forge.forge asks for CAP_SYS_ADMIN sysrq-trigger" in w for w in got.boot.warnings), got.boot
    # Its daemon was killed when its run ended, and its run counts for nothing.
    outlive = {r.privilege: r for r in got.reproducers if r.name == "outlive"}
    for privilege, run in outlive.items():
        assert run.verdict is Verdict.ERROR and "left 1 processes running" in run.reason, (privilege, run)
        assert run.evidence["daemon_started"] == 1
    poll = {r.privilege: r.verdict for r in got.reproducers if r.name == "watermark_poll"}
    assert poll == {"root": Verdict.DELIVERED, "user-paranoid2": Verdict.DELIVERED}
    # its report-shaped lines stayed its own
    assert not [s for s in got.splats if "forged_report" in s.report or "forged_kmsg" in s.report]
    # the kernel printed its exec'd path's lines, one inside its record's first line and one as a line of its own
    # behind the record's timestamp: neither is a report
    console = (tmp_path / "console.log").read_text().replace("\r", "")
    assert re.search(r"^\[\s*\d+\.\d+\] process '.*' launched '/tmp/WARNING: CPU: 0 PID: 1 at forged_inline\+0x1/0x2$",
                     console, re.M)
    assert re.search(r"^\[\s*\d+\.\d+\] WARNING: CPU: 0 PID: 1 at forged_exec\+0x1/0x2$", console, re.M)
    assert not [s for s in got.splats if "forged_" in s.report], got.splats
    assert not [s for s in got.splats if s.kind == "ubsan"], got.splats  # the segfaulting child's name


def qemu_writing(console_log: Path) -> int | None:
    """The QEMU process whose serial console is `console_log`, if one runs."""
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"file:{console_log}".encode() in argv and argv[0].startswith(b"qemu-system"):
            return int(proc.name)
    return None


def test_qemu_killed_from_outside_is_the_targets_failure_not_a_kernel_crash(
        tmp_path: Path, built, test_programs: dict[str, Path], kernel_6_1: Kernel, accel: Accel,
        catalogue) -> None:
    # The host's OOM killer, as a user would see it: QEMU dies of SIGKILL while a case runs. The kernel did
    # nothing wrong: the kernel is not tested (exit 3), its cut-off case no finding.
    programs = {"a_hang": test_programs["hang"]}
    initrd = initramfs.write(initramfs.guest_entries(built.init, programs), tmp_path / "hang.cpio")
    log = tmp_path / "console.log"
    config = RunOptions(accel, repro_timeout_ms=60_000, repeat=1, privileges=("root",))

    def kill_once_running() -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if log.exists() and "sigwake.start=a_hang" in log.read_text(errors="replace") and \
                    (pid := qemu_writing(log)) is not None:
                os.kill(pid, signal.SIGKILL)
                return
            time.sleep(0.2)  # polling a file another process writes, bounded by the deadline
    killer = threading.Thread(target=kill_once_running)
    killer.start()
    got = run_qemu(kernel_6_1, initrd, sorted(programs), config, log)
    killer.join(timeout=310)
    assert got.boot.target_failed.startswith("QEMU was killed by SIGKILL, not by sigwake"), got.boot
    result = got.as_result("k", Runner("qemu", 1))
    gate = of_run([result], catalogue)
    assert gate.findings == [] and gate.exit_code == COULD_NOT_TEST, gate
