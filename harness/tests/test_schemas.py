"""Schemas as data (harness/sigwake/schemas/): each is a valid JSON Schema, each stored record sigwake writes
fits its own, the committed results fit theirs, a schema requires exactly what its record cannot go without,
and the one codec (typed_json) gives back what it was given."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from sigwake.core import schema
from sigwake.core.model import KernelResult, QaLine
from sigwake.commands.mutant_score import MutantRecord
from sigwake.core.outcomes import BisectionRecord, ValidationRecord
from sigwake.store.store import QA_FILE, load_qa, load_results, write_checked
from sigwake.core.typed_json import from_data, to_data

RESULTS = Path(__file__).resolve().parents[2] / "results"
RECORDS = {"kernel-result": KernelResult, "validation": ValidationRecord, "bisection": BisectionRecord}


@pytest.mark.parametrize("kind", sorted(schema.CURRENT))
def test_every_schema_is_a_json_schema_of_its_own_version(kind: str) -> None:
    loaded = schema.schema_of(kind, schema.CURRENT[kind])
    jsonschema.Draft202012Validator.check_schema(loaded)
    assert loaded["properties"]["schema"] == {"const": schema.CURRENT[kind]}


@pytest.mark.parametrize("kind", sorted(RECORDS))
def test_a_schema_requires_exactly_the_fields_its_record_cannot_go_without(kind: str) -> None:
    fields = dataclasses.fields(RECORDS[kind])
    without_default = {f.name for f in fields if f.default is dataclasses.MISSING
                       and f.default_factory is dataclasses.MISSING}  # type: ignore[misc]
    loaded = schema.schema_of(kind, schema.CURRENT[kind])
    assert set(loaded["required"]) == without_default | {"schema"}
    assert set(loaded["properties"]) == {f.name for f in fields}


def test_the_committed_results_fit_their_schemas_and_the_codec_gives_them_back() -> None:
    loaded = load_results(RESULTS)
    assert loaded.results and not loaded.unreadable
    for result in loaded.results:
        assert from_data(KernelResult, to_data(result)) == result
    if (RESULTS / QA_FILE).exists():
        assert load_qa(RESULTS)
    score = RESULTS / "mutants" / "score.json"
    if score.exists():
        data = json.loads(score.read_text())
        schema.check("mutant-score", data)
        assert [to_data(from_data(MutantRecord, m)) for m in data["mutants"]] == [
            {**to_data(MutantRecord("", "", "", "", "")), **m} for m in data["mutants"]]


def test_a_record_that_breaks_its_schema_is_never_written(tmp_path: Path) -> None:
    line = to_data(QaLine("amd64", "rt"))
    with pytest.raises(ValueError, match=r"breaks qa schema 1 at lines/0/arch"):
        write_checked(tmp_path / QA_FILE, "qa", {"schema": 1, "lines": [{**line, "arch": 64}]})
    assert not (tmp_path / QA_FILE).exists()
    with pytest.raises(ValueError, match="no schema 9 of a qa record"):
        schema.check("qa", {"schema": 9, "lines": []})


def test_a_qa_file_of_before_schema_1_is_upgraded_on_reading(tmp_path: Path) -> None:
    (tmp_path / QA_FILE).write_text(json.dumps([to_data(QaLine("amd64", "rt"))]))  # the bare list it once was
    assert load_qa(tmp_path) == [QaLine("amd64", "rt")]


def test_the_codec_refuses_what_does_not_fit() -> None:
    good = to_data(QaLine("amd64", "rt"))
    with pytest.raises(TypeError, match="no field colour"):
        from_data(QaLine, {**good, "colour": "red"})
    with pytest.raises(TypeError, match="QaLine.steps"):
        from_data(QaLine, {**good, "steps": "none"})


KERNEL_RESULT = schema.CURRENT["kernel-result"]


def as_schema_5(committed: dict[str, Any]) -> dict[str, Any]:
    """A committed result as schema 5 wrote it: without what schemas 6 to 11 added (the boot's start and whether
    the kernel started or the target failed, the machine, a report's task, place and time, the cases run, a built
    tree's source, each case's start)."""
    boot = {k: v for k, v in committed["boot"].items() if k not in ("kernel_started", "target_failed", "started_at")}
    runner = {k: v for k, v in committed["runner"].items() if k != "cases"}
    origin = {k: v for k, v in committed["origin"].items()
              if k not in ("git_url", "git_branch", "git_name", "patchset_hash")}
    cases = [{k: v for k, v in r.items() if k != "started_at"} for r in committed["reproducers"]]
    splats = [{k: v for k, v in s.items() if k not in ("task", "place", "printk_s")} for s in committed["splats"]]
    return {**{k: v for k, v in committed.items() if k != "machine"}, "schema": 5, "boot": boot, "runner": runner,
            "origin": origin, "reproducers": cases, "splats": splats}


def committed_result(where: Any) -> dict[str, Any]:
    """The first committed result `where` holds for, as schema 5 wrote it."""
    return as_schema_5(json.loads(next(p for p in sorted(RESULTS.glob("*.json"))
                                       if p.name != QA_FILE and where(json.loads(p.read_text()))).read_text()))


def now(current: dict[str, Any]) -> dict[str, Any]:
    """A schema 5 result as it reads today: no peers (taken out for the older schemas), the kernel started (its
    init ran), no target failure told apart, no machine probed (no peers ran), every case run (no --case), no
    built tree's source, no boot's or case's start."""
    source = dict.fromkeys(("git_url", "git_branch", "git_name", "patchset_hash"))
    return {**current, "schema": KERNEL_RESULT, "peers": [], "runner": {**current["runner"], "cases": []},
            "boot": {**current["boot"], "kernel_started": True, "target_failed": "", "started_at": None},
            "machine": {}, "origin": {**current["origin"], **source},
            "reproducers": [{**r, "started_at": None} for r in current["reproducers"]]}


def test_a_schema_5_result_learns_whether_its_kernel_started(tmp_path: Path) -> None:
    current = committed_result(lambda r: r["boot"]["status"] == "ok")
    committed = Path(f"{current['kernel_id']}.json")
    (tmp_path / committed.name).write_text(json.dumps(current))
    (result,) = load_results(tmp_path).results
    assert result.boot.kernel_started and to_data(result) == {**now(current), "peers": current["peers"]}
    # a boot that died before our init: started only when its console shows the kernel's banner
    died = {**current, "boot": {**current["boot"], "status": "boot-failed", "init_uptime_ms": None}}
    (tmp_path / committed.name).write_text(json.dumps(died))
    log = tmp_path / committed.name.replace(".json", ".console.log")
    log.write_text("[    0.000000] Linux version 6.12.118+deb13-amd64 (debian-kernel@lists.debian.org) ...\n")
    assert load_results(tmp_path).results[0].boot.kernel_started
    log.write_text("qemu-system-x86_64: cannot load kernel\n")
    assert not load_results(tmp_path).results[0].boot.kernel_started


def test_a_schema_6_result_tells_no_target_failure_apart(tmp_path: Path) -> None:
    current = committed_result(lambda r: r["boot"]["status"] == "ok")
    old = {**current, "schema": 6, "boot": {**current["boot"], "kernel_started": True}, "machine": {}}
    schema.check("kernel-result", old)  # what schema 6 allowed
    (tmp_path / f"{current['kernel_id']}.json").write_text(json.dumps(old))
    (result,) = load_results(tmp_path).results
    assert result.boot.target_failed == "" and to_data(result) == {**now(current), "peers": current["peers"]}


def test_a_schema_3_result_is_upgraded_on_reading_its_runner_s_qemu_named_machine(tmp_path: Path) -> None:
    # A committed result as schema 3 wrote it: the runner's machine was called qemu, and no peers ran.
    current = {k: v for k, v in committed_result(lambda r: r["runner"].get("machine")).items() if k != "peers"}
    committed = Path(f"{current['kernel_id']}.json")
    runner = {("qemu" if k == "machine" else k): v for k, v in current["runner"].items()}
    old = {**current, "schema": 3, "runner": runner}
    schema.check("kernel-result", old)  # what schema 3 allowed
    (tmp_path / committed.name).write_text(json.dumps(old))
    (result,) = load_results(tmp_path).results
    assert result.schema == KERNEL_RESULT and result.runner.machine == runner["qemu"]
    assert to_data(result) == now(current)  # nothing else changed on the way up
    with pytest.raises(ValueError, match=f"breaks kernel-result schema {KERNEL_RESULT} at runner"):
        schema.check("kernel-result", {**now(current), "runner": runner})


def test_a_schema_4_result_is_upgraded_on_reading_with_no_peers(tmp_path: Path) -> None:
    current = {k: v for k, v in committed_result(lambda r: r["runner"].get("machine")).items() if k != "peers"}
    committed = Path(f"{current['kernel_id']}.json")
    old = {**current, "schema": 4}
    schema.check("kernel-result", old)  # what schema 4 allowed
    (tmp_path / committed.name).write_text(json.dumps(old))
    (result,) = load_results(tmp_path).results
    assert result.peers == [] and to_data(result) == now(current)
    with pytest.raises(ValueError, match=f"breaks kernel-result schema {KERNEL_RESULT} at peers"):
        schema.check("kernel-result", {**now(current), "peers": [{"program": "watermark_signal"}]})
