"""A run that is interrupted or killed, or whose disk fills, for real: every QEMU
dies with the harness, what finished is kept and said, --resume picks up where it
stopped, a full disk names the file and leaves the earlier results."""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sigwake.core.atomic import DiskFullError
from sigwake.commands.cli import REPO
from sigwake.kernels.kernels import Kernel
from sigwake.store.store import write_result

from conftest import spec
from test_reports import OLD


def start_run(results: Path, *kernels: Kernel, extra: tuple[str, ...] = (),
              own_group: bool = False) -> subprocess.Popen[str]:
    """`own_group`: the run leads a process group of its own, as a shell's foreground job does."""
    argv = [sys.executable, "-m", "sigwake.commands.cli", "run", "--results", str(results), "--jobs", "1", "--repeat", "1",
            *(a for k in kernels for a in ("--kernel", spec(k))), *extra]
    env = {**os.environ, "PYTHONPATH": str(REPO / "harness")}
    # A shell without job control starts its background commands with SIGINT ignored, and Python then
    # leaves it ignored: a test suite started that way (a CI runner's, nohup's) must still give the run
    # a terminal's SIGINT, as a user's shell would.
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            process_group=0 if own_group else None,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def wait_for_line(proc: subprocess.Popen[str], needle: str) -> list[str]:
    """Reads its progress (stderr) until a line holds `needle`; the boot timeouts bound the wait."""
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if needle in line:
            return seen
    raise AssertionError(f"the run ended before {needle!r}:\n{''.join(seen)}")


def qemus_writing(console_log: Path) -> list[str]:
    done = subprocess.run(["pgrep", "-f", f"qemu-system.*{re.escape(str(console_log))}"], capture_output=True,
                          text=True)
    return done.stdout.split()


def gone_within(console_log: Path, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while qemus_writing(console_log):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)  # waiting for the kernel to reap a SIGKILLed process: nothing to block on
    return True


def test_sigterm_keeps_what_finished_says_what_did_not_and_takes_qemu_along(
        tmp_path: Path, kernel_6_1: Kernel, kernel_6_12: Kernel) -> None:
    results = tmp_path / "results"
    proc = start_run(results, kernel_6_1, kernel_6_12)
    wait_for_line(proc, f"testing {kernel_6_12.id}")  # 6.1 is recorded, 6.12 is booting
    second_log = results / f"{kernel_6_12.id}.console.log"
    deadline = time.monotonic() + 60
    while not qemus_writing(second_log) and time.monotonic() < deadline:
        time.sleep(0.1)  # until its QEMU has started: the line comes just before
    assert qemus_writing(second_log), "the second kernel's QEMU never started"
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert f"finished and kept in {results}/: {kernel_6_1.id}" in stderr and f"not finished: {kernel_6_12.id}" in stderr
    assert "Traceback" not in stderr
    assert json.loads((results / f"{kernel_6_1.id}.json").read_text())["kernel_id"] == kernel_6_1.id
    assert not (results / f"{kernel_6_12.id}.json").exists()
    assert gone_within(second_log, 5), "QEMU outlived the harness"

    # --resume keeps 6.1 (same image, same programs) and boots only 6.12.
    again = start_run(results, kernel_6_1, kernel_6_12, extra=("--resume",))
    _, stderr = again.communicate(timeout=600)
    # 1: 6.1 lacks "perf/core: Don't send SIGTRAP after exec removed the event", a finding of the kernel's own
    assert again.returncode == 1, stderr
    assert f"{kernel_6_1.id}: recorded before for this image and these programs, kept (--resume)" in stderr
    assert f"testing {kernel_6_1.id}" not in stderr and f"testing {kernel_6_12.id}" in stderr
    assert (results / f"{kernel_6_12.id}.json").exists()


def test_ctrl_c_at_a_terminal_cuts_no_boot_into_a_result(tmp_path: Path, kernel_6_1: Kernel,
                                                          kernel_6_12: Kernel) -> None:
    # A terminal sends SIGINT to the whole foreground process group: the harness and every child in its group.
    results = tmp_path / "results"
    proc = start_run(results, kernel_6_1, kernel_6_12, own_group=True)
    wait_for_line(proc, f"testing {kernel_6_12.id}")
    second_log = results / f"{kernel_6_12.id}.console.log"
    deadline = time.monotonic() + 60
    while not qemus_writing(second_log) and time.monotonic() < deadline:
        time.sleep(0.1)  # until its QEMU has started: the line comes just before
    assert qemus_writing(second_log), "the second kernel's QEMU never started"
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    # The boot the interrupt cut is not recorded as that kernel's boot-failed, nor listed as kept.
    assert f"finished and kept in {results}/: {kernel_6_1.id};" in stderr and f"not finished: {kernel_6_12.id}" in stderr
    assert not (results / f"{kernel_6_12.id}.json").exists()
    assert gone_within(second_log, 5), "QEMU outlived the harness"


def test_a_killed_harness_takes_its_qemu_along(tmp_path: Path, kernel_6_1: Kernel) -> None:
    results = tmp_path / "results"
    proc = start_run(results, kernel_6_1)
    wait_for_line(proc, f"testing {kernel_6_1.id}")
    log = results / f"{kernel_6_1.id}.console.log"
    deadline = time.monotonic() + 60
    while not qemus_writing(log) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert qemus_writing(log), "QEMU never started"
    proc.kill()  # SIGKILL: no handler runs; the kernel's parent-death signal does the work
    proc.wait(timeout=30)
    assert gone_within(log, 5), "QEMU outlived a SIGKILLed harness"


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
def test_a_full_disk_names_the_file_and_keeps_earlier_results(tmp_path: Path) -> None:
    small = tmp_path / "small"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=100k", "tmpfs", str(small)], check=True)
    try:
        write_result(small, OLD)
        earlier = (small / f"{OLD.kernel_id}.json").read_text()
        bigger = copy.deepcopy(OLD)
        bigger.reproducers[0].evidence["filler"] = "x" * 200_000
        with pytest.raises(DiskFullError, match=f"no space left to write {small}/{OLD.kernel_id}.json"):
            write_result(small, bigger)
        assert (small / f"{OLD.kernel_id}.json").read_text() == earlier  # the earlier result is kept
        assert not list(small.glob(".*partial"))
    finally:
        subprocess.run(["umount", str(small)], check=True)
