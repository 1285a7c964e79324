"""The typed model, the store and the Markdown renderer."""

import json
import shutil
from pathlib import Path

from sigwake.programs.catalogue import Catalogue
from sigwake.parse.outcome import case_verdicts
from sigwake.core.model import BootRecord, KernelResult, Origin, ReproResult, Runner
from sigwake.parse.ktap import parse_program
from sigwake.reports.render_markdown import render_matrix
from sigwake.reports.report import ReportOptions, render
from sigwake.store.store import load_results, write_result
from sigwake.core.typed_json import to_data
from sigwake.core.verdicts import Verdict

CRASH = Path(__file__).parent / "data" / "crash-cloud-6.12.95"  # a schema 2 result and its console log


def result(kernel_id: str, release: str, sigio: Verdict) -> KernelResult:
    return KernelResult(
        kernel_id, release, Origin("debian", package=f"linux-image-{kernel_id}"),
        Runner("qemu", 5, accel="tcg"), BootRecord("ok", 4.0, 1300),
        [ReproResult("watermark_sigio", sigio, "", {"records": 3, "pollin": 1, "signals": 0,
                                                    "record_types": "SWITCH,SWITCH"}, 101.0),
         ReproResult("watermark_poll", Verdict.DELIVERED, "", {"records": 2, "pollin": 1}, 20.0)],
        "2026-11-29T00:00:00+00:00", "abc",
    )


def test_write_then_load_round_trips(tmp_path: Path) -> None:
    original = result("6.1.0-57-amd64", "6.1.0-57-amd64", Verdict.NOT_DELIVERED)
    path = write_result(tmp_path, original)
    assert path.name == "6.1.0-57-amd64.json"
    assert json.loads(path.read_text())["reproducers"][0]["verdict"] == "not-delivered"
    assert load_results(tmp_path).results == [original]
    assert not list(tmp_path.glob(".*partial"))


def test_evidence_is_typed_from_the_parser_on() -> None:
    ((_, _, _, evidence),) = case_verdicts(parse_program(["KTAP version 1", "1..1", "# records=3", "# record_types=SWITCH",
                                            "# si_band=0x41", "# verdict=delivered", "ok 1 a"]))
    assert evidence == {"records": 3, "record_types": "SWITCH", "si_band": "0x41"}


def test_rewriting_replaces_and_keeps_other_kernels(tmp_path: Path) -> None:
    write_result(tmp_path, result("a", "6.1.0", Verdict.NOT_DELIVERED))
    write_result(tmp_path, result("b", "6.12.1", Verdict.DELIVERED))
    write_result(tmp_path, result("a", "6.1.0", Verdict.ERROR))
    loaded = {r.kernel_id: r for r in load_results(tmp_path).results}
    assert loaded["a"].reproducers[0].verdict is Verdict.ERROR
    assert loaded["b"].reproducers[0].verdict is Verdict.DELIVERED


def test_a_foreign_or_truncated_file_is_named_and_the_others_still_load(tmp_path: Path, catalogue: Catalogue) -> None:
    write_result(tmp_path, result("6.1.0-57-amd64", "6.1.0-57-amd64", Verdict.NOT_DELIVERED))
    (tmp_path / "notes.json").write_text("{}")
    (tmp_path / "cut.json").write_text(json.dumps(to_data(result("x", "6.1", Verdict.DELIVERED)))[:200])
    loaded = load_results(tmp_path)
    assert [r.kernel_id for r in loaded.results] == ["6.1.0-57-amd64"]
    assert sorted(u.split(":")[0].rsplit("/", 1)[-1] for u in loaded.unreadable) == ["cut.json", "notes.json"]
    text = render(tmp_path, "markdown", ReportOptions(), catalogue)
    assert "| 6.1.0-57-amd64 |" in text and "notes.json: not a sigwake result file" in text


def test_matrix_orders_kernels_and_flags_mismatches(tmp_path: Path, catalogue: Catalogue) -> None:
    write_result(tmp_path, result("6.12.118+deb13-amd64", "6.12.118+deb13-amd64", Verdict.NOT_DELIVERED))
    write_result(tmp_path, result("6.1.0-57-amd64", "6.1.0-57-amd64", Verdict.NOT_DELIVERED))
    text = render(tmp_path, "markdown", ReportOptions(), catalogue)
    header = next(line for line in text.splitlines() if line.startswith("| reproducer |"))
    assert header == "| reproducer | 6.1.0-57-amd64 | 6.12.118+deb13-amd64 |"  # ordered by release
    row = next(line for line in text.splitlines() if line.startswith("| watermark_sigio |"))
    assert row.startswith("| watermark_sigio | **not-delivered** records=3 pollin=1 signals=0 | ≠ ")
    assert "≠ **not-delivered**" in text
    assert "6.12.118+deb13-amd64: difference: [root] watermark_sigio: regression: measured not-delivered" in text
    assert "**findings: 1 (1 difference)**" in text
    assert "fd20bb51ed39" in text
    # A case a failed boot never ran is no difference from what is known of the kernel, but it is lost: a
    # finding of its own kind, in the matrix as in the summary.
    dead = result("6.12.95+deb12-amd64", "6.12.95+deb12-amd64", Verdict.BOOT_FAILED)
    dead.boot = BootRecord("boot-failed", 4.0, 1300, "Kernel panic - not syncing: Fatal exception")
    write_result(tmp_path, dead)
    text = render(tmp_path, "markdown", ReportOptions(), catalogue)
    assert "6.12.95+deb12-amd64: difference" not in text
    assert ("- 6.12.95+deb12-amd64: lost: 1 cases never reached a verdict (boot-failed: Kernel panic - not syncing: "
            "Fatal exception): [root] watermark_sigio\n") in text


def test_matrix_shows_a_missing_cell(catalogue: Catalogue) -> None:
    only_poll = result("x", "6.1.0", Verdict.DELIVERED)
    only_poll.reproducers = only_poll.reproducers[1:]
    other = result("y", "6.1.0", Verdict.NOT_DELIVERED)
    assert "| – |" in render_matrix([only_poll, other], catalogue)


def test_a_dirty_tree_is_said_loudly(tmp_path: Path) -> None:
    from sigwake.kernels.build import git
    from sigwake.commands.orchestrator import dirty_warning, source_commit
    git(tmp_path, "init", "-q")
    (tmp_path / "f").write_text("one\n")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "old.json").write_text("{}\n")
    git(tmp_path, "add", "f", "results")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    clean = source_commit(tmp_path)
    assert not clean.endswith("-dirty") and dirty_warning(clean) is None
    (tmp_path / "results" / "old.json").unlink()  # regenerating results/ is what a run does: still clean
    assert source_commit(tmp_path) == clean
    (tmp_path / "f").write_text("two\n")
    dirty = source_commit(tmp_path)
    warning = dirty_warning(dirty)
    assert dirty == clean + "-dirty" and warning is not None and "uncommitted changes" in warning


def test_unreadable_files_are_named_and_the_rest_still_loads(tmp_path: Path) -> None:
    write_result(tmp_path, result("6.1.0-57-amd64", "6.1.0-57-amd64", Verdict.NOT_DELIVERED))
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00garbage")  # not text at all
    (tmp_path / "folder.json").mkdir()  # a name like a result's, no file
    (tmp_path / "old.json").write_text(json.dumps({"schema": 1, "kernel_id": "x"}))
    loaded = load_results(tmp_path)
    assert [r.kernel_id for r in loaded.results] == ["6.1.0-57-amd64"]
    named = {u.split(":")[0].rsplit("/", 1)[-1]: u for u in loaded.unreadable}
    assert set(named) == {"binary.json", "folder.json", "old.json"}
    assert "cannot be read" in named["folder.json"] and "schema 1" in named["old.json"]


def test_a_schema_2_file_is_upgraded_with_its_console_log_and_says_when_it_has_none(tmp_path: Path) -> None:
    current = to_data(result("6.12.95+deb12-cloud-amd64", "6.12.95+deb12-cloud-amd64", Verdict.DELIVERED))
    old = {k: v for k, v in current.items() if k not in ("splats", "kernel_version")} | {"schema": 2}
    for r in old["reproducers"]:
        del r["console_span"]
    (tmp_path / "6.12.95+deb12-cloud-amd64.json").write_text(json.dumps(old))
    shutil.copy(CRASH / "6.12.95+deb12-cloud-amd64.console.log", tmp_path)
    (upgraded,) = load_results(tmp_path).results
    assert [s.title for s in upgraded.splats] == ["PANIC: double fault in alloc_pid"]
    (tmp_path / "6.12.95+deb12-cloud-amd64.console.log").unlink()
    (bare,) = load_results(tmp_path).results
    assert bare.splats == [] and "its kernel reports cannot be read again" in bare.boot.warnings[-1]
