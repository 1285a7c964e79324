"""The exit codes a gate reads (exit_codes.py): the one rule, run's summary, and the input a user gets wrong
(every command x kind of finding is test_gate.py's table): a file that is no kernel image, a results folder that does not exist."""

from __future__ import annotations

import json

from pathlib import Path

import pytest

from sigwake.programs.catalogue import Catalogue
from sigwake.commands.cli import interrupted, main, summary_exit
from sigwake.core.exit_codes import COULD_NOT_TEST, FINDING, INTERRUPTED, NO_FINDING, USAGE, exit_code
from sigwake.core.model import BootRecord
from sigwake.commands.orchestrator import Interrupted, RunSummary
from sigwake.store.store import write_result
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


def test_a_result_that_cannot_be_read_is_never_a_clean_report(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A kernel whose file is cut is in no report: each says what could not be read, and report exits 3."""
    write_result(tmp_path, kernel("6.12.118+deb13-amd64", [case("watermark_sigio", D)]))
    (tmp_path / "6.1.0-57-amd64.json").write_text('{"schema": 12, "kernel_id": "6.1.0-57-amd64", "repro')
    assert main(["report", "--results", str(tmp_path), "--format", "summary"]) == COULD_NOT_TEST
    said = capsys.readouterr()
    assert "not tested: could not be read: " in said.out and "6.1.0-57-amd64.json" in said.out
    assert said.out.splitlines()[-1] == "findings: none; not tested: 1" and "could not be read" in said.err
    assert main(["report", "--results", str(tmp_path)]) == COULD_NOT_TEST
    assert "**findings: none; not tested: 1**" in (tmp_path / "matrix.md").read_text()
    assert "findings: none; not tested: 1" in (tmp_path / "index.html").read_text()
    junit = (tmp_path / "junit.xml").read_text()
    assert 'name="unreadable results"' in junit and 'type="unreadable"' in junit


def test_a_file_that_is_no_kernel_image_is_refused_before_booting(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results"
    assert main(["run", "--kernel", "/etc/passwd", "--results", str(results), "--quiet"]) == COULD_NOT_TEST
    out = capsys.readouterr().out
    assert "not tested: /etc/passwd: /etc/passwd is not a kernel image" in out
    assert out.splitlines()[-1] == "findings: none; not tested: 1"  # never "none" alone
    assert not list(results.glob("*.console.log"))  # nothing booted
    # the same as one document on stdout (--json), the words on stderr
    assert main(["run", "--kernel", "/etc/passwd", "--results", str(results), "--quiet", "--json"]) == COULD_NOT_TEST
    said = capsys.readouterr()
    document = json.loads(said.out)
    assert (document["command"], document["exit_code"], document["findings"], document["kernels"]) == (
        "run", COULD_NOT_TEST, [], [])
    assert [u.split(" (")[0] for u in document["not_tested"]] == ["/etc/passwd: /etc/passwd is not a kernel image"]
    assert document["last_line"] == said.err.splitlines()[-1] == "findings: none; not tested: 1"


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
    ended = summary_exit(summary, catalogue)
    assert ended.exit_code == code
    assert capsys.readouterr().out.splitlines()[-1] == last == ended.document["last_line"]
    (kernel_said,) = ended.document["kernels"]  # type: ignore[misc]
    assert kernel_said["kernel"] == "6.12.118+deb13-amd64" or kernel_said["kernel"] == "7.0.1-amd64"
    assert kernel_said["headline"] == str(summary.results[0].reproducers[0].verdict)


def test_usage_and_untestable_input_get_their_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bisect", "--repro", "watermark_sigio"]) == USAGE  # neither --tree/--old/--new nor --debian
    assert main(["qa", "--arch", "sparc"]) == USAGE
    patch = tmp_path / "fix.patch"
    patch.write_text("not applied\n")
    assert main(["validate-patch", "--tree", str(tmp_path / "no-tree"), "--patch", str(patch)]) == COULD_NOT_TEST
    assert "could not test" in capsys.readouterr().err


def test_a_patch_that_breaks_the_build_is_a_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from sigwake.commands import cli
    from sigwake.commands.validate import PatchedBuildFailed

    def fail(*args: object, **kwargs: object) -> None:
        raise PatchedBuildFailed("the base built, the patched tree does not: make failed (2)")
    monkeypatch.setattr(cli, "validate_patch", fail)
    patch = tmp_path / "0001-fix.patch"
    patch.write_text("")
    assert main(["validate-patch", "--tree", str(tmp_path), "--patch", str(patch), "--results", str(tmp_path)]) == 1
    assert "finding: the base built, the patched tree does not" in capsys.readouterr().err


def test_a_package_that_cannot_be_fetched_is_a_skipped_step(tmp_path: Path) -> None:
    from sigwake.commands.bisect import PackageTester
    from sigwake.kernels.debian import DebianError, Package

    def fetch(package: Package) -> object:
        raise DebianError(f"{package.name} {package.version}: 404 Not Found")
    tester = PackageTester(fetch, {"p 1": Package("sid", "p", "1")}, None)  # type: ignore[arg-type]
    probed = tester.judge("p 1")
    assert probed.verdict is None and "could not be fetched: p 1: 404 Not Found" in probed.note


def test_an_interrupted_run_still_says_what_the_finished_kernels_found(tmp_path: Path, catalogue: Catalogue,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    finished = kernel("6.1.0-57-amd64", [case("watermark_sigio", U)])  # a refusal: a finding
    stop = Interrupted(RunSummary(results=[finished], unfinished=["6.12.118+deb13-amd64"]))
    ended = interrupted(stop, tmp_path, catalogue)
    assert ended.exit_code == INTERRUPTED
    assert [f["kind"] for f in ended.document["findings"]] == ["refusal"]  # type: ignore[union-attr]
    assert ended.document["not_tested"] == ["6.12.118+deb13-amd64: interrupted"]
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "findings: 1 (1 refusal); not tested: 1" and "not tested: 6.12.118" in out
