"""End to end under QEMU on real Debian kernels: the verdicts of the bug and its
controls, with their evidence, recorded as result files and a matrix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sigwake.programs.catalogue import Catalogue
from sigwake.judge.judgement import findings, judged_cases
from sigwake.commands.cli import REPO
from sigwake.kernels.kernels import Kernel
from conftest import spec
from sigwake.commands.orchestrator import RunConfig, RunSummary, run_kernels
from sigwake.core import protocol
from sigwake.core.progress import Progress
from sigwake.core.verdicts import Verdict


@pytest.fixture(scope="module")
def results_dir(local_results_dir: Path) -> Path:
    return local_results_dir


@pytest.fixture(scope="module")
def run(local_run: RunSummary) -> RunSummary:
    return local_run


def verdicts(run: RunSummary, kernel: Kernel, privilege: str = "root") -> dict[str, tuple[Verdict, dict[str, str]]]:
    result = next(r for r in run.results if r.kernel_id == kernel.id)
    return {r.name: (r.verdict, r.evidence) for r in result.reproducers if r.privilege == privilege}


def test_both_kernels_booted_and_reported(run: RunSummary, kernel_6_1: Kernel, kernel_6_12: Kernel) -> None:
    assert run.failures == []
    assert [r.kernel_id for r in run.results] == [kernel_6_1.id, kernel_6_12.id]
    for result in run.results:
        assert result.boot.status == "ok", result.boot
        assert result.runner.mode == "qemu" and result.runner.accel in ("tcg", "kvm")
        assert result.release and result.release.startswith(kernel_6_1.id[:4] if result.kernel_id == kernel_6_1.id else "6.12.")


# The fixes 6.1.192 lacks, seen in every run: the SIGTRAP after exec, its event's fd closed or kept (root and
# paranoid 1; fixed in 6.12.118), kernel callchains' access check (paranoid 2) and KSYMBOL records sized afresh (root; both in 6.12.113 and
# 7.2.10, not in 6.1): its only findings.
MISSING_ON_6_1 = {("root", "sigtrap_exec_fault"), ("user-paranoid1", "sigtrap_exec_fault"),
                  ("root", "sigtrap_exec_fault_fd_kept"), ("user-paranoid1", "sigtrap_exec_fault_fd_kept"),
                  ("user-paranoid2", "kernel_access_callchain"), ("root", "bpf_ksymbol_record_size"),
                  ("root", "group_exec_removed_leader_join"), ("user-paranoid1", "group_exec_removed_leader_join"),
                  ("user-paranoid2", "group_exec_removed_leader_join")}


def test_6_1_marks_the_fd_readable_but_sends_no_sigio(run: RunSummary, kernel_6_1: Kernel) -> None:
    verdict, evidence = verdicts(run, kernel_6_1)["watermark_sigio"]
    assert verdict is Verdict.NOT_DELIVERED, evidence
    assert evidence["records"] > 0 and "SWITCH" in evidence["record_types"]
    assert evidence["pollin"] == 1
    assert evidence["signals"] == 0


def test_6_12_delivers_sigio_with_poll_in(run: RunSummary, kernel_6_12: Kernel) -> None:
    verdict, evidence = verdicts(run, kernel_6_12)["watermark_sigio"]
    assert verdict is Verdict.DELIVERED, evidence
    assert evidence["signals"] >= 1
    assert evidence["si_signo"] == 29 and evidence["si_code"] == 1  # SIGIO, POLL_IN
    assert evidence["si_fd"] >= 0


def test_controls_are_delivered_on_both(run: RunSummary, kernel_6_1: Kernel, kernel_6_12: Kernel) -> None:
    for kernel in (kernel_6_1, kernel_6_12):
        got = verdicts(run, kernel)
        assert got["watermark_poll"][0] is Verdict.DELIVERED, got["watermark_poll"]
        assert got["overflow_sigio"][0] is Verdict.DELIVERED, got["overflow_sigio"]
        assert "SAMPLE" in got["overflow_sigio"][1]["record_types"]
        assert got["overflow_sigio"][1]["pollin"] == 0  # the overflow path alone


def test_measurements_agree_with_the_expectations_table_and_nothing_else_is_found(run: RunSummary, catalogue: Catalogue,
                                                                                  kernel_6_1: Kernel) -> None:
    """6.1.192 lacks "perf/core: Don't send SIGTRAP after exec removed the event" (seen: the new image killed in every
    run), "perf/core: Check kernel access when kernel callchains are requested", b9d1fdc6f4ac and fa091f46c383
    (an event joins a leader exec removed); Debian 13's 6.12 carries all four. Nothing else is a finding on either."""
    for result in run.results:
        found = findings([result], catalogue)
        if result.kernel_id == kernel_6_1.id:
            assert all(": missing fix: " in f.text for f in found), "\n".join(map(str, found))
            assert {(j.case.privilege, j.name) for cases in judged_cases(result, catalogue).values() for j in cases
                    if j.finding is not None} == MISSING_ON_6_1
        else:
            assert found == [], "\n".join(map(str, found))


def test_result_files_console_logs_and_matrix_are_written(run: RunSummary, results_dir: Path) -> None:
    for result in run.results:
        data = json.loads((results_dir / f"{result.kernel_id}.json").read_text())
        assert data["release"] == result.release
        assert data["origin"]["kind"] == "debian" and len(data["origin"]["sha256"]) == 64
        assert data["runner"]["machine"].startswith("QEMU emulator version")
        assert data["boot"]["seconds"] > 0 and data["boot"]["init_uptime_ms"] > 0
        assert all(r["duration_ms"] > 0 for r in data["reproducers"])
        log = (results_dir / f"{result.kernel_id}.console.log").read_text(errors="replace")
        assert "sigwake.done=" in log and result.release in log
    matrix = (results_dir / "matrix.md").read_text()
    assert all(f"| {r.kernel_id} |" in matrix for r in run.results)


def test_every_privilege_pass_is_recorded(run: RunSummary, kernel_6_1: Kernel, catalogue: Catalogue) -> None:
    result = next(r for r in run.results if r.kernel_id == kernel_6_1.id)
    # root runs at 2: Debian's 3 asks CAP_SYS_ADMIN for every event, which the root pass withholds (runner.cc)
    assert result.paranoid == {"root": "2", "user-paranoid1": "1", "user-paranoid2": "2", "user-paranoid3": "3"}
    # Unprivileged at paranoid 1 and 2 the bug looks the same as for root; at 3 Debian refuses perf entirely.
    for privilege in ("user-paranoid1", "user-paranoid2"):
        assert verdicts(run, kernel_6_1, privilege)["watermark_sigio"][0] is Verdict.NOT_DELIVERED
    refused = verdicts(run, kernel_6_1, "user-paranoid3")
    perf = {name for name, facts in catalogue.cases.items() if facts.opens_perf_events}
    assert {verdict for name, (verdict, _) in refused.items() if name in perf} == {Verdict.UNSUPPORTED}
    assert refused["urgent_sigurg_pgrp"][0] is Verdict.DELIVERED  # no perf event: not Debian's perf paranoia's
    # Adaptive repeats: a case whose first runs agree stops at protocol.DEFAULT_AGREE, one that splits runs all.
    for r in result.reproducers:
        if r.verdict is Verdict.FLAKY:
            assert sum(r.runs.values()) == protocol.DEFAULT_REPEAT, r
        else:
            assert r.runs == {str(r.verdict): protocol.DEFAULT_AGREE}, r


def test_set_output_signals_the_owner_of_the_writing_event(run: RunSummary, kernel_6_12: Kernel) -> None:
    got = verdicts(run, kernel_6_12)
    verdict, both = got["set_output_sigio_fasync_on_both"]
    assert verdict is Verdict.DELIVERED and both["source_signals"] >= 1 and both["target_signals"] == 0
    verdict, target_only = got["set_output_sigio_fasync_on_target"]
    assert verdict is Verdict.NOT_DELIVERED and target_only["pollin"] == 1 and target_only["records"] > 0


def test_thread_directed_signals_reach_the_named_thread(run: RunSummary, kernel_6_12: Kernel) -> None:
    for case in ("setown_ex_tid_overflow", "setown_ex_tid_watermark"):
        verdict, evidence = verdicts(run, kernel_6_12)[case]
        assert verdict is Verdict.DELIVERED, (case, evidence)
        assert evidence["signal_tid"] == evidence["owner_tid"] != evidence["decoy_tid"]
        assert evidence["signals_on_other_threads"] == 0


def test_one_signal_per_watermark_crossing(run: RunSummary, kernel_6_1: Kernel, kernel_6_12: Kernel) -> None:
    verdict, evidence = verdicts(run, kernel_6_12)["exactly_once"]
    assert verdict is Verdict.DELIVERED and evidence["signals"] == evidence["crossings"] == 8
    verdict, evidence = verdicts(run, kernel_6_1)["exactly_once"]
    assert verdict is Verdict.NOT_DELIVERED and evidence["signals"] == 0 and evidence["crossings"] == 8


def test_memlock_budget_follows_the_accounting(run: RunSummary, kernel_6_1: Kernel) -> None:
    for privilege in ("root", "user-paranoid1"):  # root drops CAP_IPC_LOCK: its count is limited too
        verdict, evidence = verdicts(run, kernel_6_1, privilege)["memlock_budget"]
        assert verdict is Verdict.MEASURED, evidence
        assert evidence["buffers"] == evidence["predicted_buffers"] and evidence["buffers"] < 256, evidence
        assert "EPERM" in evidence["stopped_by"]


def test_inherited_cases_see_only_the_writer(run: RunSummary, kernel_6_1: Kernel, kernel_6_12: Kernel) -> None:
    for kernel, watermark in ((kernel_6_1, Verdict.NOT_DELIVERED), (kernel_6_12, Verdict.DELIVERED)):
        got = verdicts(run, kernel)
        verdict, evidence = got["inherit_wakeup_watermark"]
        assert verdict is watermark, evidence
        assert evidence["records_from_the_writer"] == 1 and evidence["records_from_the_task"] == 0, evidence
        verdict, evidence = got["inherit_wakeup_overflow"]
        assert verdict is Verdict.DELIVERED and evidence["pollin"] == 0, evidence
        assert evidence["records_from_the_writer"] > 0 and evidence["records_from_the_task"] == 0, evidence


def test_rr_probe_and_the_default_signal_path(run: RunSummary, kernel_6_1: Kernel, kernel_6_12: Kernel) -> None:
    for case in ("mmap_record_sigio", "watermark_sigio_default_signal"):
        verdict, evidence = verdicts(run, kernel_6_1)[case]
        assert verdict is Verdict.NOT_DELIVERED and evidence["pollin"] == 1, (case, evidence)
        verdict, evidence = verdicts(run, kernel_6_12)[case]
        assert verdict is Verdict.DELIVERED, (case, evidence)
        assert evidence["si_signo"] == 29 and evidence["si_code"] == 128, evidence  # SIGIO, SI_KERNEL
    assert verdicts(run, kernel_6_12)["mmap_record_sigio"][1]["signals_by_disable"] == 1


def test_cpu_wide_switch_records_need_privilege(run: RunSummary, kernel_6_12: Kernel) -> None:
    assert verdicts(run, kernel_6_12)["switch_support_cpu_wide"][0] is Verdict.DELIVERED
    result = next(r for r in run.results if r.kernel_id == kernel_6_12.id)
    refused = next(r for r in result.reproducers if r.name == "switch_support_cpu_wide" and r.privilege == "user-paranoid1")
    assert refused.verdict is Verdict.UNSUPPORTED and "EACCES" in refused.reason


def test_bpf_output_records_follow_the_watermark_fix(run: RunSummary, kernel_6_1: Kernel, kernel_6_12: Kernel) -> None:
    verdict, evidence = verdicts(run, kernel_6_1)["bpf_output_sigio"]
    assert verdict is Verdict.NOT_DELIVERED, evidence
    assert evidence["records_with_marker"] == 1 and evidence["pollin"] == 1 and evidence["signals"] == 0
    verdict, evidence = verdicts(run, kernel_6_12)["bpf_output_sigio"]
    assert verdict is Verdict.DELIVERED and evidence["si_code"] == 1, evidence
    for kernel in (kernel_6_1, kernel_6_12):
        verdict, evidence = verdicts(run, kernel)["bpf_output_perf_buffer"]
        assert verdict is Verdict.DELIVERED and evidence["records_with_marker"] == 1, evidence


def kernel_path(run: RunSummary, kernel: Kernel, case: str) -> dict[str, str]:
    result = next(r for r in run.results if r.kernel_id == kernel.id)
    return next(r.kernel_path for r in result.reproducers if r.name == case and r.privilege == "root")


def test_kernel_path_shows_where_the_chain_stops(run: RunSummary, kernel_6_1: Kernel, kernel_6_12: Kernel) -> None:
    broken = kernel_path(run, kernel_6_1, "watermark_sigio")
    assert broken["perf_pending_irq"] >= 1 and broken["perf_event_wakeup"] >= 1, broken
    assert broken["kill_fasync"] == 0 and broken["send_sigio"] == 0, broken  # the wakeup ran, no signal sent
    fixed = kernel_path(run, kernel_6_12, "watermark_sigio")
    assert fixed["kill_fasync"] >= 1 and fixed["send_sigio"] >= 1, fixed
    # perf_output_wakeup is static: a count where the kernel kept the symbol, else the reason.
    for path in (broken, fixed):
        value = path["perf_output_wakeup"]
        assert isinstance(value, int) or str(value).startswith("unavailable: "), value


def test_parallel_boots_reach_the_same_verdicts(run: RunSummary, kernel_6_1: Kernel, kernel_6_12: Kernel,
                                                cache_root: Path, tmp_path: Path) -> None:
    config = RunConfig(REPO, REPO / "build", cache_root, tmp_path / "results", (spec(kernel_6_1), spec(kernel_6_12)),
                       jobs=2)
    parallel = run_kernels(config, Progress(quiet=True))
    assert [r.kernel_id for r in parallel.results] == [r.kernel_id for r in run.results]  # the order asked
    serial = {(r.kernel_id, c.privilege, c.name): c.verdict for r in run.results for c in r.reproducers}
    assert {(r.kernel_id, c.privilege, c.name): c.verdict for r in parallel.results for c in r.reproducers} == serial
    assert all((tmp_path / "results" / f"{r.kernel_id}.json").exists() for r in parallel.results)
