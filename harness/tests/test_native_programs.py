"""Every reproducer program, run natively on this machine's kernel as a separate program and read by the one
KTAP reader (ktap.parse_program, held against how it ended by outcome.judged): each prints well-formed KTAP,
every case reaches a kernel verdict (never `error`) backed by its evidence, the exit code is the one the
verdicts owe, without perf events every case is unsupported and says why, and the cases whose behaviour is the
same on every kernel behave so. Which verdict a signal case should reach depends on the kernel: that is each
case's facts, held against this host in test_native.py."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from sigwake.core import protocol
from sigwake.core.model import Evidence
from sigwake.core.verdicts import Verdict
from sigwake.parse.ktap import parse_program
from sigwake.parse.outcome import judged
from sigwake.programs.binaries import Binaries

NOPERF = Path(__file__).resolve().parents[2] / "build" / "repro" / "tests" / "sigwake-test-noperf"  # perf_event_open fails with ENOSYS under it

# Real perf on this host, one test at a time: the user's perf mlock allowance and the CPUs are shared by every
# process of the user (memlock_budget*), so no two of these may run on two workers at once.
pytestmark = pytest.mark.xdist_group("host-perf")


def run(path: Path, *wrapper: str) -> tuple[dict[str, tuple[Verdict, str, Evidence]], int]:
    """(case -> (verdict, reason, evidence)) as the harness reads them, and the exit code."""
    done = subprocess.run([*wrapper, str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode >= 0, f"{path.name} was killed by signal {-done.returncode}"
    cases = judged(parse_program(done.stdout.splitlines()), path.name, f"exit {done.returncode}", done.returncode)
    return {name: (verdict, reason, evidence) for name, verdict, reason, evidence in cases}, done.returncode


def case(built: Binaries, program: str, name: str) -> tuple[Verdict, str, Evidence]:
    return run(built.reproducers[program])[0][name]


def test_each_case_reaches_a_kernel_verdict_and_the_exit_code_agrees(built: Binaries) -> None:
    wrong = []
    for program, path in built.reproducers.items():
        cases, code = run(path)  # judged() makes a case an error when its exit code contradicts the verdicts
        wrong += [f"{program} {name}: {v}: {why}" for name, (v, why, _) in cases.items() if not v.is_kernel_verdict]
        wrong += [] if cases else [f"{program}: no case"]
    assert not wrong, "\n".join(wrong)


def test_without_perf_every_case_is_unsupported_and_says_why(built: Binaries) -> None:
    perf = {c.program for c in built.catalogue.cases.values() if c.opens_perf_events}
    # a socket's urgent data, an input device's events: no perf event to refuse
    assert set(built.reproducers) - perf == {"urgent_sigurg", "evdev_sigio"}
    for program, path in built.reproducers.items():
        if program not in perf:
            continue
        cases, code = run(path, str(NOPERF))
        assert cases and code == 4, program
        for name, (verdict, reason, _) in cases.items():
            assert verdict is Verdict.UNSUPPORTED and "ENOSYS" in reason and "CONFIG_PERF_EVENTS" in reason, name


def test_watermark_sigio_backs_its_verdict_with_evidence(built: Binaries) -> None:
    verdict, _, e = case(built, "watermark_sigio", "watermark_sigio")
    assert e["pollin"] == 1 and "SWITCH" in str(e["record_types"])
    if verdict is Verdict.DELIVERED:
        assert int(e["signals"]) >= 1 and (e["si_signo"], e["si_code"]) == (signal.SIGIO, 1)  # POLL_IN
    else:
        assert e["signals"] == 0


def test_overflow_paths_are_delivered_with_their_evidence(built: Binaries) -> None:
    # Sample overflows have raised signals on every kernel, and with the ring never reaching its watermark
    # poll() stays quiet: the overflow path alone signalled.
    verdict, _, e = case(built, "overflow_sigio", "overflow_sigio")
    assert verdict is Verdict.DELIVERED and "SAMPLE" in str(e["record_types"]) and e["pollin"] == 0
    verdict, why, e = case(built, "setown_ex_tid", "setown_ex_tid_overflow")
    assert verdict is Verdict.DELIVERED, why
    assert e["signal_tid"] == e["owner_tid"] != e["decoy_tid"] and e["pollin"] == 0
    verdict, why, e = case(built, "setsig_siginfo", "setsig_siginfo_overflow")
    assert verdict is Verdict.DELIVERED, why
    assert e["si_signo"] == signal.SIGRTMIN + 2 and e["deliveries_with_wrong_siginfo"] == 0
    assert e["queued"] == 1  # several samples, several real-time signals
    # Bounded like the other overflow cases, so no burst overflows the real-time queue into plain SIGIO.
    assert 3 <= int(e["records"]) <= 8 and e["fallback_sigio"] == 0
    verdict, why, e = case(built, "inherit_wakeup", "inherit_wakeup_overflow")
    assert verdict is Verdict.DELIVERED, why
    assert e["records_from_the_writer"] != 0 and e["records_from_the_task"] == 0 and e["pollin"] == 0


def test_mmap_record_sigio_takes_the_default_signal_path(built: Binaries) -> None:
    # rr's probe, step for step: the default signal path (no F_SETSIG) sends plain SIGIO, SI_KERNEL.
    verdict, _, e = case(built, "mmap_record_sigio", "mmap_record_sigio")
    assert e["mmap_records_of_our_page"] == 1
    if verdict is Verdict.DELIVERED:
        assert (e["signals_by_disable"], e["si_signo"], e["si_code"]) == (1, signal.SIGIO, 0x80)  # SI_KERNEL


def test_inherited_watermark_records_come_from_the_writer_alone(built: Binaries) -> None:
    _, _, e = case(built, "inherit_wakeup", "inherit_wakeup_watermark")
    assert (e["records_from_the_writer"], e["records_from_the_task"]) == (1, 0)
    assert e["records_by_the_parent_event"] == 0  # an inherited child wrote it, not the event we opened
    assert e["record_types"] == "MMAP"  # no FORK record: the event was disabled across the fork


def test_the_cases_alike_on_every_kernel_behave_so(built: Binaries) -> None:
    verdict, why, e = case(built, "watermark_poll", "watermark_poll")
    assert verdict is Verdict.DELIVERED and e["pollin"] == 1, why
    verdict, why, e = case(built, "wakeup_events_nonsample", "wakeup_events_nonsample")
    assert verdict is Verdict.NO_WAKEUP and e["records"] != 0, why
    # Root too is limited: it drops CAP_IPC_LOCK, so its count can differ from the prediction.
    verdict, why, e = case(built, "memlock_budget", "memlock_budget")
    assert verdict is Verdict.MEASURED and e["buffers"] == e["predicted_buffers"], why
    assert int(e["buffers"]) < 256, "the loop cap: the limit never applied"


def test_bpf_output_records_carry_the_marker_and_reach_perf_buffer(built: Binaries) -> None:
    cases, _ = run(built.reproducers["bpf_output_sigio"])
    verdict, why, e = cases["bpf_output_sigio"]
    assert verdict is not Verdict.UNSUPPORTED, why
    assert (e["records_with_marker"], e["pollin"]) == (1, 1)
    _, _, e = cases["bpf_output_wakeup_events"]
    assert (e["records_with_marker"], e["pollin"]) == (1, 1)
    verdict, why, e = cases["bpf_output_perf_buffer"]
    assert verdict is Verdict.DELIVERED and e["records_with_marker"] == 1, why


def test_the_host_runner_frames_its_report_and_traces_the_kernel_path(built: Binaries) -> None:
    # The same framed KTAP as a guest (stdin empty: the token is "unset"), and as root one kernel-path line
    # per function on the chain, each a count or why it is unavailable.
    done = subprocess.run([str(built.runner), "--repeat", "1", "--passes", "root",
                           str(built.reproducers["watermark_sigio"])], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) > 10 and all(line.startswith("SIGWAKE unset ") for line in lines)
    key = "# " + protocol.REPORT["kernel_path"]
    path = dict(line.split(key, 1)[1].split("=", 1) for line in lines if key in line)
    if os.geteuid() != 0:
        pytest.skip("the kernel-path tracer loads BPF: root only")
    for function in ("perf_output_wakeup", "perf_event_wakeup", "kill_fasync", "send_sigio"):
        assert path[function].startswith("unavailable: ") or path[function].isdigit(), (function, path)
    assert ("perf_pending_irq" in path) != ("perf_pending_event" in path)
