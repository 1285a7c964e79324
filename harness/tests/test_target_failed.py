"""A boot the target ended (QEMU killed or stopped from outside) is not the kernel's doing: what says so, and
what it must never hide (a kernel's own crash in another boot, a report while a case ran)."""

from __future__ import annotations

import signal

import pytest

from sigwake.commands.validate import pair
from sigwake.core.model import Runner
from sigwake.core.exit_codes import COULD_NOT_TEST, FINDING
from sigwake.judge.gate import of_changes, of_run
from sigwake.parse import console
from sigwake.programs.catalogue import Catalogue
from sigwake.targets.capture import Capture
from sigwake.targets.interpret import KernelOutcome, combine_boots, read_boot
from sigwake.targets.qemu import ended_from_outside

TOKEN = "cd" * 8
BANNER = "[    0.000000] Linux version 6.12.118+deb13-amd64 (debian-kernel@lists.debian.org) #1 SMP"


@pytest.mark.parametrize("returncode, stderr, said", [
    (-signal.SIGKILL, "", "QEMU was killed by SIGKILL, not by sigwake (the host's OOM killer, a user)"),
    (0, "qemu-system-x86_64: terminating on signal 15 from pid 4242 (bash)\n",
     "QEMU was stopped from outside: qemu-system-x86_64: terminating on signal 15 from pid 4242 (bash)"),
    (-signal.SIGABRT, "qemu: tcg.c:123: assertion failed\n", ""),  # QEMU's own end, maybe the guest's doing
    (-signal.SIGSEGV, "", ""),
    (-40, "", ""),  # a real-time signal: no name to give, and no crash of the harness
    (0, "", ""), (1, "qemu-system-x86_64: could not load kernel\n", ""),
])
def test_only_what_came_from_outside_is_the_targets(returncode: int, stderr: str, said: str) -> None:
    assert ended_from_outside(returncode, stderr) == said


def boot(case: str, tail: list[str], target_failed: str = "", offset: int = 0):  # type: ignore[no-untyped-def]
    payloads = ["KTAP version 1", "# sigwake.release=6.12.118+deb13-amd64", "# sigwake.init_uptime_ms=900", "1..2",
                "# sigwake.tainted=0", "# sigwake.pass=root", "# sigwake.paranoid=2", f"# sigwake.start={case}"]
    text = "\n".join([BANNER, *(console.frame_line(TOKEN, n, p).rstrip("\n") for n, p in enumerate(payloads)),
                      *tail]) + "\n"
    return read_boot(Capture(text, None if target_failed else 0, False, 5.0, "", target_failed=target_failed),
                     TOKEN, 600.0, offset)


KILLED = "QEMU was killed by SIGKILL, not by sigwake (the host's OOM killer, a user)"
PANIC = ["[    3.000000] Kernel panic - not syncing: Fatal exception"]


def test_a_kernel_killed_from_outside_is_not_tested_and_no_finding(catalogue: Catalogue) -> None:
    got = combine_boots([boot("a", [], KILLED)], ["a", "b"], ("root",), 1)
    assert got.boot.target_failed == KILLED
    judged = of_run([got.as_result("k", Runner("qemu", 1))], catalogue)
    assert judged.findings == [] and judged.exit_code == COULD_NOT_TEST


def test_a_kernel_that_crashed_itself_in_another_boot_is_a_finding_whatever_the_target_did(
        catalogue: Catalogue) -> None:
    # boot 1 killed from outside in a; the fresh boot 2 panics in b: the kernel's crash stands
    got = combine_boots([boot("a", [], KILLED), boot("b", PANIC, offset=20)], ["a", "b"], ("root",), 1)
    assert got.boot.target_failed == ""
    judged = of_run([got.as_result("k", Runner("qemu", 1))], catalogue)
    assert judged.exit_code == FINDING and "crash" in {f.kind for f in judged.findings}, judged


def test_a_report_while_a_case_ran_counts_though_the_target_ended_the_patched_boot(catalogue: Catalogue) -> None:
    warn = ["[    2.000000] ------------[ cut here ]------------",
            "[    2.000000] WARNING: CPU: 0 PID: 70 at kernel/events/core.c:6870 perf_fasync+0x10/0x20",
            "[    2.000000] ---[ end trace 0000000000000000 ]---"]
    base = combine_boots([boot("watermark_sigio", [], KILLED)], ["watermark_sigio"], ("root",), 1)
    patched = combine_boots([boot("watermark_sigio", warn, KILLED)], ["watermark_sigio"], ("root",), 1)
    assert patched.splats and patched.boot.target_failed == KILLED
    changes = pair(base, patched, catalogue)
    assert [c.outcome for c in changes] == ["regresses"], [str(c) for c in changes]
    assert of_changes(changes, []).exit_code == FINDING


def test_a_case_the_target_cut_off_on_the_patched_kernel_could_not_be_tested(catalogue: Catalogue) -> None:
    done = ["# sigwake.case=watermark_sigio", "    KTAP version 1", "    1..1", "    # verdict=delivered",
            "    ok 1 watermark_sigio", "# sigwake.duration_us=900", "# sigwake.exit=0",
            "ok 1 watermark_sigio.watermark_sigio [root run 1]", "# sigwake.done=1"]
    payloads = ["KTAP version 1", "# sigwake.release=6.12.118+deb13-amd64", "# sigwake.init_uptime_ms=900", "1..1",
                "# sigwake.tainted=0", "# sigwake.pass=root", "# sigwake.paranoid=2",
                "# sigwake.start=watermark_sigio", *done]
    text = "\n".join([BANNER, *(console.frame_line(TOKEN, n, p).rstrip("\n") for n, p in enumerate(payloads))]) + "\n"
    base: KernelOutcome = combine_boots([read_boot(Capture(text, 0, False, 5.0, ""), TOKEN, 600.0)],
                                        ["watermark_sigio"], ("root",), 1)
    patched = combine_boots([boot("watermark_sigio", [], KILLED)], ["watermark_sigio"], ("root",), 1)
    [change] = pair(base, patched, catalogue)
    assert change.outcome == "could not test" and KILLED in change.qualifier, str(change)
    assert of_changes([change], []).exit_code == COULD_NOT_TEST
