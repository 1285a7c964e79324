"""validate-patch and bisect keep their answers: each run is a record under results/ (validations/,
bisections/), checked against its JSON Schema, read back by the reports (matrix.md and the page). The commands
run here with their slow parts faked (no kernel is built or booted); the record, the store and the reports are
the real ones."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import sigwake.commands.cli as cli
from sigwake.programs.catalogue import Catalogue
from sigwake.commands.bisect import BisectReport, Booted
from sigwake.kernels.build import BuiltKernel
from sigwake.core.exit_codes import FINDING, NO_FINDING
from sigwake.core.model import ReproResult
from sigwake.reports.report import ReportOptions, render
from sigwake.store.store import load_bisections, load_result, load_results, load_validations
from sigwake.core.outcomes import CaseChange, Mark, Step
from sigwake.commands.validate import Validation
from sigwake.core.verdicts import Verdict

D, N = Verdict.DELIVERED, Verdict.NOT_DELIVERED
COMMITTED = Path(__file__).resolve().parents[2] / "results"


class FakeBinaries:
    def __init__(self, catalogue: Catalogue) -> None:
        self.catalogue = catalogue

    def select(self, names: list[str]) -> FakeBinaries:
        return self

    def within_cpus(self, cpus: int) -> tuple[FakeBinaries, dict[str, int]]:
        return self, {}


def kernel(state: str) -> BuiltKernel:
    return BuiltKernel(Path(f"/k/{state}"), state, state, Path("log"), 1.0)


@pytest.fixture
def no_build(monkeypatch: pytest.MonkeyPatch, catalogue: Catalogue) -> None:
    monkeypatch.setattr(cli.binaries, "build", lambda *args, **kwargs: FakeBinaries(catalogue))


def test_validate_patch_keeps_its_answer_and_the_reports_show_it(tmp_path: Path, no_build: None,
                                                                   monkeypatch: pytest.MonkeyPatch, catalogue: Catalogue) -> None:
    changes = [CaseChange("watermark_sigio", "root", "fixes", ReproResult("watermark_sigio", N),
                          ReproResult("watermark_sigio", D)),
               CaseChange("watermark_poll", "root", "regresses", ReproResult("watermark_poll", D),
                          ReproResult("watermark_poll", Verdict.NO_WAKEUP)),
               CaseChange("overflow_sigio", "root", "no change", ReproResult("overflow_sigio", D),
                          ReproResult("overflow_sigio", D))]
    monkeypatch.setattr(cli, "validate_patch", lambda *args, **kwargs: Validation(kernel("abc"), kernel("abc+p"),
                                                                                  changes))
    patch = tmp_path / "0001-fix.patch"
    patch.write_text("")
    results = tmp_path / "results"
    code = cli.main(["validate-patch", "--tree", str(tmp_path), "--patch", str(patch), "--results", str(results),
                     "--passes", "root", "--repeat", "2"])
    assert code == FINDING
    (record,) = load_validations(results, unreadable := [])
    assert not unreadable and record.patches == ["0001-fix.patch"] and record.passes == ["root"]
    assert record.repeat == 2 and record.exit_code == FINDING and record.last_line == "findings: 1 (1 regresses)"
    assert record.changes == changes  # every case kept whole, its result on both kernels with it
    matrix = render(results, "markdown", ReportOptions(), catalogue)
    assert "## Patch validations (validate-patch)" in matrix and "findings: 1 (1 regresses); 1 cases unchanged" in matrix
    # the finding first, the unchanged case only counted
    said = [line for line in matrix.splitlines() if line.startswith("  - ")]
    assert said[0].startswith("  - watermark_poll [root]: regresses") and len(said) == 2
    page = render(results, "html", ReportOptions(), catalogue)
    assert 'id="validations"' in page and 'data-findings="yes"' in page


def test_a_validation_whose_only_finding_is_a_kernel_report_shows_it(tmp_path: Path, no_build: None,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     catalogue: Catalogue) -> None:
    same = [CaseChange("watermark_poll", "root", "no change", ReproResult("watermark_poll", D),
                       ReproResult("watermark_poll", D))]
    monkeypatch.setattr(cli, "validate_patch", lambda *args, **kwargs: Validation(
        kernel("abc"), kernel("abc+p"), same, reports=["WARNING in perf_event_init"]))
    patch = tmp_path / "0001-warn.patch"
    patch.write_text("")
    results = tmp_path / "results"
    assert cli.main(["validate-patch", "--tree", str(tmp_path), "--patch", str(patch), "--results", str(results),
                     "--passes", "root"]) == FINDING
    matrix = render(results, "markdown", ReportOptions(), catalogue)
    assert "  - kernel report only the patched kernel printed: WARNING in perf_event_init" in matrix
    page = render(results, "html", ReportOptions(), catalogue)
    assert 'data-findings="yes"' in page and "WARNING in perf_event_init" in page


def test_bisect_keeps_its_answer_and_the_reports_show_it(tmp_path: Path, no_build: None,
                                                         monkeypatch: pytest.MonkeyPatch, catalogue: Catalogue) -> None:
    steps = [Step("linux-image-6.9.7-amd64", N, "3 runs", Mark.OLD),
             Step("linux-image-6.10.3-amd64", D, "3 runs", Mark.NEW)]
    report = BisectReport(["linux-image-6.10.3-amd64"], "linux-image-6.9.7-amd64", N, D, steps, 0.97)
    monkeypatch.setattr(cli, "bisect_debian", lambda *args, **kwargs: report)
    results = tmp_path / "results"
    assert cli.main(["bisect", "--debian", "amd64", "--repro", "watermark_sigio", "--results", str(results)]) == NO_FINDING
    (record,) = load_bisections(results, unreadable := [])
    assert not unreadable and record.subject == "watermark_sigio:watermark_sigio"
    assert record.over == "Debian's amd64 packages" and record.first_changed == ["linux-image-6.10.3-amd64"]
    assert record.steps == steps and (record.old, record.new) == (N, D)
    assert "## Bisections" in render(results, "markdown", ReportOptions(), catalogue)
    assert 'id="bisections"' in render(results, "html", ReportOptions(), catalogue)


def bisection_past_a_hang() -> BisectReport:
    """One answer, and a step between that hung (a finding beside it)."""
    steps = [Step("linux-image-6.9.7-amd64", N, "3 runs", Mark.OLD),
             Step("linux-image-6.10.1-amd64", None, "boot hang: no console output for 30 s", Mark.SKIP, "hang"),
             Step("linux-image-6.10.3-amd64", D, "3 runs", Mark.NEW)]
    return BisectReport(["linux-image-6.10.3-amd64"], "linux-image-6.9.7-amd64", N, D, steps, 0.9)


def test_json_gives_the_gates_judgement_on_stdout_alone(tmp_path: Path, no_build: None, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """--json: stdout is one document (what the exit code and the last line come from), the words go to stderr;
    the same for a gate that found something, one that did not, and one that could not start."""
    monkeypatch.setattr(cli, "bisect_debian", lambda *args, **kwargs: bisection_past_a_hang())
    results = tmp_path / "results"
    capsys.readouterr()
    assert cli.main(["bisect", "--debian", "amd64", "--repro", "watermark_sigio", "--results", str(results),
                     "--json"]) == FINDING
    said = capsys.readouterr()
    document = json.loads(said.out)
    assert document["command"] == "bisect" and document["exit_code"] == FINDING
    assert document["findings"] == [{"kernel_id": "linux-image-6.10.1-amd64", "kind": "hang",
                                     "text": "watermark_sigio:watermark_sigio: boot hang: no console output for 30 s "
                                             "(marked skip)"}]
    assert document["last_line"] == "findings: 1 (1 hang)" and document["first_changed"] == ["linux-image-6.10.3-amd64"]
    assert [s["mark"] for s in document["steps"]] == ["old", "skip", "new"]
    assert Path(document["record"]).parent == results / "bisections"
    assert said.err.splitlines()[-1] == "findings: 1 (1 hang)"  # the words, all of them, where a person reads

    monkeypatch.setattr(cli, "validate_patch", lambda *args, **kwargs: Validation(kernel("abc"), kernel("abc+p"), [
        CaseChange("watermark_sigio", "root", "no change", ReproResult("watermark_sigio", D),
                   ReproResult("watermark_sigio", D))]))
    patch = tmp_path / "0001-fix.patch"
    patch.write_text("")
    assert cli.main(["validate-patch", "--tree", str(tmp_path), "--patch", str(patch), "--results", str(results),
                     "--passes", "root", "--json"]) == NO_FINDING
    document = json.loads(capsys.readouterr().out)
    assert (document["exit_code"], document["findings"], document["not_tested"]) == (NO_FINDING, [], [])
    assert document["last_line"] == "findings: none" and document["patched"] == "/k/abc+p"

    assert cli.main(["bisect", "--repro", "watermark_sigio", "--json"]) == 2  # neither a range nor --debian
    document = json.loads(capsys.readouterr().out)
    assert document["exit_code"] == 2 and "--tree, --old and --new" in document["error"]


def test_a_bisection_step_with_a_problem_is_shown_as_a_finding(tmp_path: Path, no_build: None,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               catalogue: Catalogue) -> None:
    monkeypatch.setattr(cli, "bisect_debian", lambda *args, **kwargs: bisection_past_a_hang())
    results = tmp_path / "results"
    assert cli.main(["bisect", "--debian", "amd64", "--repro", "watermark_sigio", "--results", str(results)]) == FINDING
    said = "linux-image-6.10.1-amd64: boot hang: no console output for 30 s → skip (finding: hang)"
    assert f"  - {said}" in render(results, "markdown", ReportOptions(), catalogue)
    page = render(results, "html", ReportOptions(), catalogue)
    assert said in page and '<li class="bisection" data-findings="yes">' in page


def test_the_kernels_a_bisection_booted_are_kept_as_results_and_shown(tmp_path: Path, no_build: None,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     catalogue: Catalogue) -> None:
    booted = []
    for name, status in (("linux-image-6.9.7-amd64_1", "ok"), ("linux-image-6.10.1-amd64_1", "timeout")):
        result = dataclasses.replace(load_result(COMMITTED / "6.1.0-57-amd64.json"), kernel_id=name)
        result.boot = dataclasses.replace(result.boot, status=status, detail="" if status == "ok" else "silent 30 s")
        console = tmp_path / f"{name}.console.log"
        console.write_text(f"the console of {name}\n")
        booted.append(Booted(result, console))
    steps = [Step("linux-image-6.9.7-amd64 1", N, "3 runs", Mark.OLD),
             Step("linux-image-6.10.1-amd64 1", None, "boot timeout: silent 30 s", Mark.SKIP, "hang")]
    report = BisectReport(["linux-image-6.10.1-amd64 1"], "linux-image-6.9.7-amd64 1", N, D, steps, 0.5, booted)
    monkeypatch.setattr(cli, "bisect_debian", lambda *args, **kwargs: report)
    results = tmp_path / "results"
    cli.main(["bisect", "--debian", "amd64", "--repro", "watermark_sigio", "--results", str(results)])
    (record,) = load_bisections(results, unreadable := [])
    assert not unreadable
    kept = results / "bisections" / record.name
    assert load_result(kept / "linux-image-6.10.1-amd64_1.json").boot.status == "timeout"
    assert (kept / "linux-image-6.10.1-amd64_1.console.log").read_text() == "the console of linux-image-6.10.1-amd64_1\n"
    assert [r.kernel_id for r in load_results(results).results] == []  # never in the matrix: a bisection's own
    said = (f"booted linux-image-6.10.1-amd64_1: boot timeout: silent 30 s (bisections/{record.name}/"
            f"linux-image-6.10.1-amd64_1.json, bisections/{record.name}/linux-image-6.10.1-amd64_1.console.log)")
    assert f"  - {said}" in render(results, "markdown", ReportOptions(), catalogue)
    assert said in render(results, "html", ReportOptions(), catalogue)


def test_a_stored_record_that_breaks_its_schema_is_named_not_shown(tmp_path: Path) -> None:
    folder = tmp_path / "bisections"
    folder.mkdir(parents=True)
    (folder / "broken.json").write_text(json.dumps({"schema": 1, "subject": "x"}))
    unreadable: list[str] = []
    assert load_bisections(tmp_path, unreadable) == []
    assert "broken.json" in unreadable[0] and "breaks bisection schema 1" in unreadable[0]
