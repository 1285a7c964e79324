"""The exit codes a gate reads (exit_codes.py), command by command: run, report, qa, validate-patch, bisect,
with the input a user gets wrong: a file that is no kernel image, a results folder that does not exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from sigwake.programs.catalogue import Catalogue
from sigwake.commands.bisect import BisectReport
from sigwake.commands.cli import bisection_exit, main, summary_exit, validation_exit
from sigwake.core.exit_codes import COULD_NOT_TEST, FINDING, NO_FINDING, USAGE, exit_code
from sigwake.core.model import BootRecord
from sigwake.commands.orchestrator import RunSummary
from sigwake.store.store import write_result
from sigwake.core.outcomes import CaseChange, Mark, Step
from sigwake.core.verdicts import Verdict

from test_judgement import case, kernel

D, N, U = Verdict.DELIVERED, Verdict.NOT_DELIVERED, Verdict.UNSUPPORTED


def test_exit_codes_follow_one_rule() -> None:
    assert exit_code(0, 0) == NO_FINDING and exit_code(2, 0) == FINDING
    assert exit_code(0, 1) == COULD_NOT_TEST and exit_code(1, 1) == FINDING  # a finding wins


def test_bad_reports_input_gets_the_right_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--results", str(tmp_path / "nonexistent")]) == COULD_NOT_TEST
    assert "no such results folder" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:
        main(["run", "--no-such-option"])
    assert usage.value.code == USAGE
    write_result(tmp_path, kernel("6.12.118+deb13-amd64", [case("watermark_sigio", U)]))
    assert main(["report", "--results", str(tmp_path), "--format", "summary"]) == NO_FINDING  # report only shows
    assert "findings: 1 (1 refusal)" in capsys.readouterr().out


def test_a_file_that_is_no_kernel_image_is_refused_before_booting(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results"
    assert main(["run", "--kernel", "/etc/passwd", "--results", str(results), "--quiet"]) == COULD_NOT_TEST
    out = capsys.readouterr().out
    assert "not tested: /etc/passwd: /etc/passwd is not a kernel image" in out
    assert out.splitlines()[-1] == "findings: none; not tested: 1"  # never "none" alone
    assert not list(results.glob("*.console.log"))  # nothing booted


@pytest.mark.parametrize("summary, code, last", [
    (RunSummary([kernel("6.12.118+deb13-amd64", [case("watermark_sigio", D)])]), NO_FINDING, "findings: none"),
    (RunSummary([kernel("6.12.118+deb13-amd64", [case("watermark_sigio", N)])]), FINDING,
     "findings: 1 (1 difference)"),
    (RunSummary([kernel("6.12.118+deb13-amd64", [case("watermark_sigio", D)])], failures=["sid: no such package"]),
     COULD_NOT_TEST, "findings: none; not tested: 1"),
    # QEMU refused the image before the kernel ran anything: not tested, not a finding of the kernel
    (RunSummary([kernel("7.0.1-amd64", [case("watermark_sigio", Verdict.BOOT_FAILED)],
                        BootRecord("boot-failed", 0.1, None, "QEMU exited with 1 before the init reported"))]),
     COULD_NOT_TEST, "findings: none; not tested: 1"),
])
def test_run_and_qa_exit_by_their_summary(summary: RunSummary, code: int, last: str,
                                          capsys: pytest.CaptureFixture[str], catalogue: Catalogue) -> None:
    assert summary_exit(summary, catalogue) == code
    assert capsys.readouterr().out.splitlines()[-1] == last


def change(outcome: str, qualifier: str = "") -> CaseChange:
    return CaseChange("watermark_sigio", "root", outcome, None, None, (), qualifier)


@pytest.mark.parametrize("changes, code, last", [
    ([change("fixes"), change("no change")], NO_FINDING, "findings: none"),
    ([change("regresses", "intermittent 2/5: not-delivered x2"), change("no change")], FINDING,
     "findings: 1 (1 regresses)"),
    ([change("lost"), change("changes")], FINDING, "findings: 2 (1 lost, 1 changes)"),
    ([change("inconclusive"), change("appeared")], NO_FINDING, "findings: none"),
])
def test_validate_patch_exits_by_what_the_patch_did(changes: list[CaseChange], code: int, last: str) -> None:
    assert validation_exit(changes) == (code, last)


def report(first: list[str], *notes: tuple[Verdict, str]) -> BisectReport:
    steps = [Step(f"c{i}", v, note, Mark.OLD) for i, (v, note) in enumerate(notes)]
    return BisectReport(first, "c0", N, D, steps, 1.0 / len(first))


@pytest.mark.parametrize("bisected, code", [
    (report(["c5"], (N, "not-delivered x3"), (D, "delivered x3")), NO_FINDING),
    (report(["c4", "c5"], (N, "not-delivered x3")), FINDING),  # a range, not an answer
    (report(["c5"], (Verdict.FLAKY, "split: not-delivered x1, delivered x2; marked old")), FINDING),
    (report(["c5"], (D, "delivered x3; kernel splat: WARNING in perf_event_wakeup")), FINDING),
])
def test_bisect_exits_by_its_answer(bisected: BisectReport, code: int) -> None:
    assert bisection_exit(bisected) == code


def test_usage_and_untestable_input_get_their_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bisect", "--repro", "watermark_sigio"]) == USAGE  # neither --tree/--old/--new nor --debian
    assert main(["qa", "--arch", "sparc"]) == USAGE
    patch = tmp_path / "fix.patch"
    patch.write_text("not applied\n")
    assert main(["validate-patch", "--tree", str(tmp_path / "no-tree"), "--patch", str(patch)]) == COULD_NOT_TEST
    assert "could not test" in capsys.readouterr().err
