"""The upstream perf selftests as peers (programs/peers.py, judge/peers.py): their kselftest output nested in
the runner's document read as their tests, each held to its case's root verdict, a disagreement or an
unfinished selftest a finding in every report; and a real guest that runs them beside the cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import spec
from sigwake.commands.cli import REPO
from sigwake.commands.orchestrator import RunConfig, run_kernels
from sigwake.core import schema
from sigwake.core.model import PeerResult
from sigwake.core.progress import Progress
from sigwake.core.verdicts import Verdict
from sigwake.judge.judgement import findings
from sigwake.judge.peers import agreement, compare
from sigwake.kernels.kernels import Kernel
from sigwake.parse import ktap
from sigwake.programs.catalogue import Catalogue
from sigwake.reports.render_html import render_html
from sigwake.reports.render_kcidb import render_kcidb
from sigwake.reports.render_markdown import render_matrix
from sigwake.targets.interpret import peer_results
import kcidb_reader
from test_reports import case, kernel

RUNNER = """KTAP version 1
1..3
# sigwake.pass=root
# sigwake.start=watermark_sigio
# sigwake.case=watermark_sigio
    KTAP version 1
    1..1
    # verdict=delivered
    ok 1 watermark_sigio
# sigwake.duration_us=10
# sigwake.exit=0
ok 1 watermark_sigio.watermark_sigio [root run 1]
# sigwake.peer=peer-sigtrap_threads
    TAP version 13
    1..2
    # Starting 2 tests from 1 test cases.
    #  RUN           sigtrap_threads.remain_disabled ...
    #            OK  sigtrap_threads.remain_disabled
    ok 1 sigtrap_threads.remain_disabled
    #  RUN           sigtrap_threads.enable_event ...
    # sigtrap_threads.c:179:enable_event:Expected ctx.signal_count (5) == NUM_THREADS + 1 (6)
    # enable_event: Test failed
    #          FAIL  sigtrap_threads.enable_event
    not ok 2 sigtrap_threads.enable_event
    # FAILED: 1 / 2 tests passed.
# sigwake.duration_us=20
# sigwake.exit=1
not ok 2 peer peer-sigtrap_threads
# sigwake.peer=peer-watermark_signal
    TAP version 13
    1..1
    # Starting 1 tests from 1 test cases.
    #  RUN           global.watermark_signal ...""".splitlines()


def test_a_peer_s_kselftest_output_reads_as_its_tests_and_a_cut_off_one_as_an_error() -> None:
    report = ktap.parse_runner(RUNNER)
    assert [r.case for r in report.runs] == ["watermark_sigio"] and not report.done
    assert [p.program for p in report.peers] == ["sigtrap_threads", "watermark_signal"]
    assert report.last_started() == "peer/peer-watermark_signal/"  # a fresh boot resumes after the cut-off one
    threads, cut = (peer_results(p, 100, None) for p in report.peers)
    assert [(r.test, r.result) for r in threads] == [("sigtrap_threads.remain_disabled", "pass"),
                                                     ("sigtrap_threads.enable_event", "fail")]
    assert threads[1].detail == ("sigtrap_threads.c:179:enable_event:Expected ctx.signal_count (5) == NUM_THREADS + 1 "
                                 "(6); enable_event: Test failed")
    assert threads[1].console_line == 100 + RUNNER.index("    not ok 2 sigtrap_threads.enable_event") + 1
    assert [(r.test, r.result) for r in cut] == [("watermark_signal", "error")]
    assert cut[0].detail == "the boot ended while it ran; 0 test result(s) before"


@pytest.mark.parametrize("verdict,result,agrees", [
    (Verdict.DELIVERED, "pass", True), (Verdict.DELIVERED, "fail", False), (Verdict.MEASURED, "pass", True),
    (Verdict.NOT_DELIVERED, "fail", True), (Verdict.NOT_DELIVERED, "pass", False), (Verdict.MISDELIVERED, "fail", True),
    (Verdict.UNSUPPORTED, "skip", True), (Verdict.UNSUPPORTED, "fail", False), (Verdict.DELIVERED, "skip", False),
    (Verdict.FLAKY, "pass", None), (Verdict.ERROR, "fail", None), (Verdict.BOOT_FAILED, "pass", None)])
def test_a_peer_result_is_held_to_its_case_s_verdict(verdict: Verdict, result: str, agrees: bool | None) -> None:
    assert agreement(result, verdict) is agrees


def test_a_disagreement_and_an_unfinished_selftest_are_findings_in_every_report(tmp_path: Path,
                                                                                catalogue: Catalogue) -> None:
    peers = [PeerResult("watermark_signal", "global.watermark_signal", "fail", "watermark_signal: Test failed", 40),
             PeerResult("sigtrap_threads", "sigtrap_threads", "error", "TIMEOUT killed at the deadline", 50),
             PeerResult("remove_on_exec", "remove_on_exec.fork_only", "fail", "Expected self->fd (-1) != -1", 60)]
    result = kernel("6.12.9-amd64", "6.12.9-amd64", [case("watermark_sigio", Verdict.DELIVERED),
                                                      case("sigtrap_inherit_thread", Verdict.DELIVERED)])
    result.peers = peers
    compared = compare(result, catalogue)
    assert [(c.case, c.word) for c in compared] == [("watermark_sigio", "disagree"), ("sigtrap_inherit_thread", "–"),
                                                    (None, "–")]  # remove_on_exec: no case names it
    found = [f for f in findings([result], catalogue) if f.kind == "peer"]
    assert [f.text for f in found] == [
        "upstream global.watermark_signal says fail (watermark_signal: Test failed) where watermark_sigio is delivered",
        "upstream sigtrap_threads did not finish: TIMEOUT killed at the deadline"]
    matrix = render_matrix([result], catalogue)
    assert "| 6.12.9-amd64 | watermark_signal: global.watermark_signal | fail: watermark_signal: Test failed | " \
           "watermark_sigio: delivered | disagree |" in matrix
    submission = render_kcidb([result], catalogue, tmp_path)
    kcidb_reader.validate(submission)
    tests = {t["path"]: t for t in submission["tests"]}
    assert tests["kselftest.perf_events.watermark_signal.global.watermark_signal"]["status"] == "FAIL"
    assert tests["kselftest.perf_events.watermark_signal.global.watermark_signal"]["misc"]["agreement"] == "disagree"
    assert tests["kselftest.perf_events.sigtrap_threads.sigtrap_threads"]["status"] == "ERROR"
    # each finding is an incident on its selftest's test, so a dashboard shows it whatever the selftest's status
    view = kcidb_reader.dashboard(submission)
    on = {i["test_id"]: i["comment"] for incidents in view.issues.values() for i in incidents}
    assert sorted(on[tests[path]["id"]] for path in tests if path.startswith("kselftest.") and tests[path]["id"] in on) \
        == sorted(f.text for f in found)
    assert 'class="peer" data-agrees="disagree"' in render_html([result], catalogue)


def test_the_upstream_selftests_run_beside_the_cases_in_a_real_guest(kernel_6_12: Kernel, cache_root: Path,
                                                                      tmp_path: Path, catalogue: Catalogue) -> None:
    config = RunConfig(REPO, REPO / "build", cache_root, tmp_path, (spec(kernel_6_12),), repeat=1,
                       peer_selftests=True)
    summary = run_kernels(config, Progress(quiet=True))
    (result,) = summary.results
    compared = {(c.peer.program, c.peer.test): c for c in compare(result, catalogue)}
    watermark = compared[("watermark_signal", "global.watermark_signal")]
    assert (watermark.peer.result, watermark.case, watermark.word) == ("pass", "watermark_sigio", "agree")
    threads = [c for (program, _), c in compared.items() if program == "sigtrap_threads"]
    assert len(threads) == 5 and all(c.word == "agree" for c in threads), threads
    assert any(program == "remove_on_exec" for program, _ in compared)  # shown, compared with no case
    stored = json.loads((tmp_path / f"{result.kernel_id}.json").read_text())
    assert stored["peers"] and stored["schema"] == schema.CURRENT["kernel-result"]
    # probed before the selftests ran: QEMU's CPU counts every write of a breakpoint (sigtrap_threads agreed
    # above because it could); TCG has no PMU to give remove_on_exec
    assert result.machine["breakpoint"] == "yes: counted 1000 of 1000 writes", result.machine
    assert result.machine["pmu"].startswith("no: "), result.machine
