"""The report formats, from stored results: each mapping checked where a wrong one
would show (a known failure, a difference, a skip, an error, a missed boot), each
format read back by what reads it: KTAP by the ktap.rst rules, JUnit by Debian's
junitparser, KCIDB against the v5.3 constraints it relies on, the HTML page in a
real headless Chromium."""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import jsonschema
import pytest
from junitparser import Error, Failure, JUnitXml, Skipped

from ktap_rules import check as ktap_problems
from sigwake.judgement import Outcome, judge
from sigwake.model import BootRecord, KernelResult, Origin, ReproResult, Runner
from sigwake.report import ReportOptions, render, write_reports
from sigwake.render_html import render_html
from sigwake.render_junit import render_junit
from sigwake.render_kcidb import render_kcidb
from sigwake.render_ktap import render_ktap
from sigwake.store import load_results, write_result
from sigwake.verdicts import Verdict

COMMITTED = Path(__file__).resolve().parents[2] / "results"
D, N = Verdict.DELIVERED, Verdict.NOT_DELIVERED


def kernel(kernel_id: str, release: str, cases: list[ReproResult], boot: str = "ok") -> KernelResult:
    sha256 = hashlib.sha256(kernel_id.encode()).hexdigest()
    return KernelResult(kernel_id, release, Origin("debian", f"linux-image-{kernel_id}", "1.0", "trixie", sha256=sha256),
                        Runner("qemu", 5, "QEMU 7.2", "tcg"), BootRecord(boot, 10.0, 900, console_tail="panic here" if
                                                                         boot != "ok" else None),
                        cases, "2026-11-30T00:00:00+00:00", "abc123")


def case(name: str, verdict: Verdict, privilege: str = "root", reason: str = "") -> ReproResult:
    return ReproResult(name, verdict, reason, {"records": 2, "pollin": 1, "signals": 0 if verdict is N else 1}, 12.0,
                       privilege, {str(verdict): 5})


# One kernel before the fix, one after it that regressed, one whose boot failed.
OLD = kernel("6.1.0-57-amd64", "6.1.0-57-amd64", [
    case("watermark_sigio", N), case("watermark_poll", D),
    case("watermark_sigio", Verdict.UNSUPPORTED, "user-paranoid3", "perf_event_open: EACCES"),
    case("exactly_once", Verdict.ERROR, reason="the program reported no case and ended: exit 127")])
REGRESSED = kernel("6.12.9-amd64", "6.12.9-amd64", [case("watermark_sigio", N), case("watermark_poll", D)])
DEAD = kernel("7.0.1-amd64", "7.0.1-amd64", [case("watermark_sigio", Verdict.BOOT_FAILED, reason="never ran")],
              boot="boot-failed")


@pytest.mark.parametrize("k, name, privilege, outcome", [
    (OLD, "watermark_sigio", "root", Outcome.XFAIL),  # the known bug of 6.1, with its source
    (OLD, "watermark_poll", "root", Outcome.PASS),
    (OLD, "watermark_sigio", "user-paranoid3", Outcome.SKIP),
    (OLD, "exactly_once", "root", Outcome.ERROR),
    (REGRESSED, "watermark_sigio", "root", Outcome.FAIL),  # 6.12 has the fix: not-delivered is a regression
    (DEAD, "watermark_sigio", "root", Outcome.MISS),
])
def test_each_case_is_judged_against_what_is_known(k: KernelResult, name: str, privilege: str,
                                                   outcome: Outcome) -> None:
    found = next(c for c in k.reproducers if c.name == name and c.privilege == privilege)
    judged = judge(k, found)
    assert judged.outcome is outcome, judged.why
    if outcome is Outcome.XFAIL:
        assert "fd20bb51ed39" in judged.why


def test_ktap_follows_the_rules_and_maps_each_outcome() -> None:
    text = render_ktap(OLD)
    assert ktap_problems(text.splitlines()) == []
    assert "    ok 1 watermark_sigio # XFAIL not-delivered, as known of this kernel: fd20bb51ed39" in text
    assert "    ok 2 watermark_poll\n" in text
    assert "    not ok 3 exactly_once # ERROR error: the program reported no case" in text
    assert "    ok 1 watermark_sigio # SKIP perf_event_open: EACCES" in text
    assert "not ok 1 root" in text and "ok 2 user-paranoid3" in text  # the error fails its pass
    regressed = render_ktap(REGRESSED)
    assert "    not ok 1 watermark_sigio\n" in regressed and "# difference: regression" in regressed
    assert ktap_problems(render_ktap(DEAD).splitlines()) == []


def test_the_ktap_checker_catches_broken_documents() -> None:
    good = render_ktap(OLD).splitlines()
    assert ktap_problems(good[1:]) != []  # no version line
    renumbered = [line.replace("ok 2 watermark_poll", "ok 3 watermark_poll") for line in good]
    assert any("numbered" in p for p in ktap_problems(renumbered))
    doubled = [line.replace("exactly_once", "watermark_poll") for line in good]
    assert any("names repeat" in p for p in ktap_problems(doubled))


def test_junit_is_read_back_by_a_real_junit_reader(tmp_path: Path) -> None:
    path = tmp_path / "junit.xml"
    path.write_text(render_junit([OLD, REGRESSED, DEAD]))
    suites = {suite.name: suite for suite in JUnitXml.fromfile(str(path))}
    assert set(suites) == {"6.1.0-57-amd64/root", "6.1.0-57-amd64/user-paranoid3", "6.12.9-amd64/root",
                           "7.0.1-amd64/root"}
    results = {(name, c.name): [type(r) for r in c.result] for name, s in suites.items() for c in s}
    assert results[("6.1.0-57-amd64/root", "watermark_sigio")] == []  # a known failure passes, and says so
    assert results[("6.1.0-57-amd64/root", "exactly_once")] == [Error]
    assert results[("6.1.0-57-amd64/user-paranoid3", "watermark_sigio")] == [Skipped]
    assert results[("6.12.9-amd64/root", "watermark_sigio")] == [Failure]
    assert results[("7.0.1-amd64/root", "watermark_sigio")] == [Error]
    failure = next(c for c in suites["6.12.9-amd64/root"] if c.name == "watermark_sigio").result[0]
    assert "regression" in failure.message and "signals=0" in failure.message  # the evidence in the message
    assert suites["6.12.9-amd64/root"].failures == 1 and suites["6.1.0-57-amd64/root"].errors == 1


# What sigwake relies on of KCIDB's I/O schema v5.3 (kcidb-io's kcidb_io/schema/v05_03.py and its
# ancestors): the required fields, the id, origin and path patterns, the status names, the
# properties each object may have (no others), the excerpt limit, and no nulls anywhere.
ORIGIN = "^[a-z0-9_]+$"
ID = "^[a-z0-9_]+:.*$"
RESOURCE_FREE = {"type": "object"}
KCIDB_V5_3 = {
    "type": "object",
    "required": ["version"],
    "additionalProperties": False,
    "properties": {
        "version": {"type": "object", "required": ["major"], "additionalProperties": False,
                    "properties": {"major": {"const": 5}, "minor": {"type": "integer", "minimum": 0, "maximum": 3}}},
        "checkouts": {"type": "array", "items": {
            "type": "object", "required": ["id", "origin"], "additionalProperties": False,
            "properties": {"id": {"type": "string", "pattern": ID}, "origin": {"type": "string", "pattern": ORIGIN},
                           "tree_name": {"type": "string"}, "comment": {"type": "string"},
                           "start_time": {"type": "string"}, "misc": RESOURCE_FREE}}},
        "builds": {"type": "array", "items": {
            "type": "object", "required": ["checkout_id", "id", "origin"], "additionalProperties": False,
            "properties": {"id": {"type": "string", "pattern": ID}, "origin": {"type": "string", "pattern": ORIGIN},
                           "checkout_id": {"type": "string", "pattern": ID},
                           "architecture": {"type": "string", "pattern": "^[a-z0-9_]*$"},
                           "comment": {"type": "string"}, "misc": RESOURCE_FREE}}},
        "tests": {"type": "array", "items": {
            "type": "object", "required": ["build_id", "id", "origin"], "additionalProperties": False,
            "properties": {
                "id": {"type": "string", "pattern": ID}, "origin": {"type": "string", "pattern": ORIGIN},
                "build_id": {"type": "string", "pattern": ID},
                "path": {"type": "string", "pattern": r"^(?:[a-zA-Z0-9_-]+(?:\.[a-zA-Z0-9_-]+)*)?$"},
                "status": {"enum": ["FAIL", "ERROR", "MISS", "PASS", "DONE", "SKIP"]},
                "start_time": {"type": "string"}, "duration": {"type": "number"},
                "log_url": {"type": "string", "pattern": "^(file|https?)://"},
                "log_excerpt": {"type": "string", "maxLength": 16384},
                "environment": {"type": "object", "additionalProperties": False,
                                "properties": {"comment": {"type": "string"}, "misc": RESOURCE_FREE}},
                "misc": RESOURCE_FREE}}},
    },
}


def no_nulls(value: object) -> bool:
    if isinstance(value, dict):
        return all(no_nulls(v) for v in value.values())
    if isinstance(value, list):
        return all(no_nulls(v) for v in value)
    return value is not None


def test_kcidb_stays_inside_v5_3_and_maps_statuses(tmp_path: Path) -> None:
    data = render_kcidb([OLD, REGRESSED, DEAD], tmp_path, "sigwake_lab")
    jsonschema.validate(data, KCIDB_V5_3)
    assert no_nulls(data)
    builds = {b["id"] for b in data["builds"]}
    checkouts = {c["id"] for c in data["checkouts"]}
    assert all(b["checkout_id"] in checkouts for b in data["builds"])
    assert all(t["build_id"] in builds for t in data["tests"])
    ids = [t["id"] for t in data["tests"]]
    assert len(set(ids)) == len(ids) and all(i.startswith("sigwake_lab:") for i in ids)
    status = {(t["build_id"].split(":")[-1], t["environment"]["misc"]["privilege"], t["path"]): t["status"]
              for t in data["tests"]}
    old = OLD.origin.sha256
    assert status[(old, "root", "sigwake.watermark_sigio")] == "FAIL"  # faulty, as known
    assert status[(old, "root", "sigwake.watermark_poll")] == "PASS"
    assert status[(old, "user-paranoid3", "sigwake.watermark_sigio")] == "SKIP"
    assert status[(old, "root", "sigwake.exactly_once")] == "ERROR"  # the reproducer's own failure
    missed = [t for t in data["tests"] if "7.0.1" in t["log_url"]]
    assert [t["status"] for t in missed] == ["MISS"]  # the harness could not run it
    assert missed[0]["log_excerpt"] == "panic here"
    assert render_kcidb([OLD, REGRESSED, DEAD], tmp_path, "sigwake_lab") == data  # ids stable across re-renders
    with pytest.raises(ValueError, match="origin"):
        render_kcidb([OLD], tmp_path, "Not-An-Origin")


def test_the_committed_results_render_in_every_format(tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(COMMITTED, results)
    written = write_reports(results, ReportOptions())
    assert {p.name for p in written} >= {"matrix.md", "junit.xml", "submission.json", "index.html"}
    for ktap in (results / "ktap").glob("*.ktap"):
        assert ktap_problems(ktap.read_text().splitlines()) == [], ktap
    jsonschema.validate(json.loads((results / "kcidb" / "submission.json").read_text()), KCIDB_V5_3)
    assert load_results(results).unreadable == []  # no report is mistaken for a result file
    JUnitXml.fromfile(str(results / "junit.xml"))
    summary = render(results, "summary", ReportOptions())
    assert summary.count("\n") >= len(list(COMMITTED.glob("*.json")))
    assert "watermark_sigio not-delivered" in summary
    # The cloud 6.12.95 kernel that oopsed mid-run (a schema 2 file): its crash is read back from its console
    # log, attributed to the case that ran, and the last line never says "none".
    assert ("finding: 6.12.95+deb12-cloud-amd64: crash: the boot ended in PANIC: double fault in "
            "kmem_cache_alloc_noprof ([user-paranoid1] set_output_sigio_fasync_on_source)") in summary
    last = summary.splitlines()[-1]
    assert last.startswith("findings: ") and "1 crash" in last and "33 lost" in last


def test_a_truncated_or_foreign_result_is_named_and_the_rest_still_render(tmp_path: Path) -> None:
    write_result(tmp_path, OLD)
    (tmp_path / "cut.json").write_text(json.dumps(REGRESSED.to_json())[:300])
    (tmp_path / "foreign.json").write_text('{"hello": "world"}')
    for fmt in ("summary", "markdown", "html"):
        text = render(tmp_path, fmt, ReportOptions())
        assert "cut.json" in text and "foreign.json" in text, fmt
        assert "6.1.0-57-amd64" in text, fmt
    assert "6.1.0-57-amd64" in render(tmp_path, "ktap", ReportOptions())


class Cells(HTMLParser):
    """Counts what the browser's DOM holds: matrix tables, their cells by class, the picture's points."""

    def __init__(self) -> None:
        super().__init__()
        self.tables = 0
        self.cells: dict[str, int] = {}
        self.points: list[str] = []
        self.boundary = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table" and a.get("class") == "matrix":
            self.tables += 1
        if tag == "td" and a.get("class"):
            self.cells[a["class"] or ""] = self.cells.get(a["class"] or "", 0) + 1
        if tag == "g" and a.get("class") == "kernel-point":
            self.points.append(f"{a.get('data-kernel')}={a.get('data-verdict')}")
        if tag == "line" and a.get("id") == "boundary":
            self.boundary = True


def png_colours(png: bytes) -> int:
    """How many distinct pixel values an 8-bit RGB(A) PNG holds (a blank page has one)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, channels = 8, b"", 0, 4
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        body = png[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, _, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8
            channels = {2: 3, 6: 4}[colour]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels + 1
    rows = [raw[i + 1:i + stride] for i in range(0, len(raw), stride * 7)]  # every 7th row, unfiltered bytes
    return len({row[j:j + channels] for row in rows for j in range(0, len(row), channels * 5)})


def test_the_html_page_renders_in_a_real_browser(tmp_path: Path) -> None:
    chromium = shutil.which("chromium")
    assert chromium is not None, "chromium is missing: ./sigwake setup installs it for the tests"
    page = tmp_path / "index.html"
    page.write_text(render_html([OLD, REGRESSED, DEAD]))
    flags = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1200,900"]
    dom = subprocess.run([*flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120,
                         check=True).stdout
    cells = Cells()
    cells.feed(dom)
    assert cells.tables == 2  # root and user-paranoid3
    assert cells.cells == {"xfail": 1, "pass": 2, "error": 1, "skip": 1, "fail": 1, "miss": 1}
    assert cells.points == ["6.1.0-57-amd64=not-delivered", "6.12.9-amd64=not-delivered", "7.0.1-amd64=boot-failed"]
    assert not cells.boundary  # no kernel here delivers: no boundary to draw
    screenshot = tmp_path / "shot.png"
    subprocess.run([*flags, f"--screenshot={screenshot}", page.as_uri()], capture_output=True, timeout=120, check=True)
    assert png_colours(screenshot.read_bytes()) > 20  # drawn, not blank


def test_the_picture_draws_the_boundary_where_the_signal_starts(tmp_path: Path) -> None:
    fixed = kernel("6.12.118-amd64", "6.12.118-amd64", [case("watermark_sigio", D)])
    cells = Cells()
    cells.feed(render_html([fixed, OLD]))  # given out of order: drawn in version order
    assert cells.points == ["6.1.0-57-amd64=not-delivered", "6.12.118-amd64=delivered"]
    assert cells.boundary
