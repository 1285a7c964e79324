"""The report formats, from stored results: each mapping checked where a wrong one
would show (a known failure, a difference, a skip, an error, a missed boot), each
format read back by what reads it: KTAP by the ktap.rst rules, JUnit by Debian's
junitparser, KCIDB by kcidb-io's v5.3 schema and the dashboard's rules
(kcidb_reader.py), the HTML page in a real headless Chromium."""

from __future__ import annotations

import dataclasses
import re

import hashlib
import json
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped

import kcidb_reader

from sigwake.programs.catalogue import Catalogue
from sigwake.judge.judgement import Outcome, findings, judge
from sigwake.core.model import BootRecord, KernelResult, Origin, ReproResult, Runner, Splat
from sigwake.reports.report import ReportOptions, render, write_reports
from sigwake.reports.render_html import _picture, render_html
from sigwake.reports.render_junit import render_junit
from sigwake.parse import ktap
from sigwake.reports.render_ktap import LINE_MAX, render_ktap
from sigwake.core.typed_json import to_data
from sigwake.store.store import load_results, write_result
from sigwake.core.verdicts import Verdict

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
                                                   outcome: Outcome, catalogue: Catalogue) -> None:
    found = next(c for c in k.reproducers if c.name == name and c.privilege == privilege)
    judged = judge(k, found, catalogue)
    assert judged.outcome is outcome, judged.why
    if outcome is Outcome.XFAIL:
        assert "fd20bb51ed39" in judged.why


def test_ktap_follows_the_rules_and_maps_each_outcome(catalogue: Catalogue) -> None:
    text = render_ktap(OLD, catalogue)
    assert ktap_problems(text.splitlines()) == []
    # a known failure is a failure to a reader that knows no XFAIL (kunit_parser), as ktap.rst says
    assert "    not ok 1 watermark_sigio # XFAIL not-delivered, as known of this kernel: fd20bb51ed39" in text
    assert "    ok 2 watermark_poll\n" in text
    assert "    not ok 3 exactly_once # ERROR error: the program reported no case" in text
    # a pass refused whole is one line
    assert "    ok 1 refused-whole # SKIP refused whole: 1 of 1 cases skipped: perf_event_open: EACCES" in text
    assert "not ok 2 root" in text  # the error fails its pass
    assert "ok 3 user-paranoid3 # SKIP nothing ran" in text
    assert "    ok 1 boot\nok 1 kernel\n" in text  # the kernel's own subtest first: a boot that finished
    regressed = render_ktap(REGRESSED, catalogue)
    assert "    not ok 1 watermark_sigio\n" in regressed and "    # difference (" in regressed
    assert "    #   regression: measured not-delivered, expected delivered" in regressed  # folded at its spaces
    assert ktap_problems(render_ktap(DEAD, catalogue).splitlines()) == []
    # a pass whose only failure is known is ok, as the gate reads it; its known failure stays not ok inside
    known_only = render_ktap(dataclasses.replace(OLD, reproducers=OLD.reproducers[:2]), catalogue)
    assert "# root: 1 known failure, no finding\nok 2 root\n" in known_only


def test_ktap_says_the_kernels_own_findings_as_every_report_counts_them(catalogue: Catalogue) -> None:
    outside = Splat("warning", "WARNING in perf_event_exit_task", 9, "WARNING: CPU: 0 PID: 1 at ...")
    fatal = Splat("bug", "BUG: unable to handle kernel NULL pointer dereference in f", 20, "BUG: ...", fatal=True)
    crashed = dataclasses.replace(REGRESSED, splats=[outside, fatal],
                                  boot=dataclasses.replace(REGRESSED.boot, status="boot-failed", init_uptime_ms=900))
    text = render_ktap(crashed, catalogue)
    assert ktap_problems(text.splitlines()) == []
    kernel_part = text[text.index("    # Subtest: kernel"):text.index("\nnot ok 1 kernel\n")]
    assert "    not ok 1 boot" in kernel_part and "    # crash: the boot ended in" in kernel_part
    assert "    # splat: WARNING in perf_event_exit_task" in kernel_part and "    not ok 2 splat-1" in kernel_part
    # every finding of the gate's that is no case's is a result of the kernel's subtest: the boot, or its own
    beside = [f for f in findings([crashed], catalogue) if not f.text.startswith("[")]  # a case's: "[pass] case"
    results = [line for line in kernel_part.splitlines() if line.startswith("    not ok ")]
    assert len(results) == 1 + sum(f.kind != "crash" for f in beside) and any(f.kind == "crash" for f in beside)
    host = dataclasses.replace(OLD, runner=dataclasses.replace(OLD.runner, mode="native"),
                               boot=dataclasses.replace(OLD.boot, status="native"))
    assert "    ok 1 run\nok 1 kernel\n" in render_ktap(host, catalogue)  # nothing booted it: its run
    hung = dataclasses.replace(host, boot=dataclasses.replace(host.boot, status="timeout", detail="killed at 600 s"))
    assert "    not ok 1 run" in render_ktap(hung, catalogue)  # the host's run that did not end is no pass
    (suite,) = [s for s in JUnitXml.fromstring(render_junit([hung], catalogue)) if s.name.endswith("/kernel")]
    (run,) = list(suite)
    assert run.name == "run" and not run.is_passed


def test_ktap_lines_stay_short_and_long_evidence_is_folded(catalogue: Catalogue) -> None:
    types = ",".join(f"PERF_RECORD_{n}" for n in range(2000))  # record_types of a long run: 20,000 characters
    long = dataclasses.replace(OLD, reproducers=[dataclasses.replace(OLD.reproducers[1], evidence={"record_types": types})])
    lines = render_ktap(long, catalogue).splitlines()
    assert ktap_problems(lines) == [] and max(map(len, lines)) <= LINE_MAX
    start = next(i for i, line in enumerate(lines) if line.startswith("    # record_types ("))
    assert re.search(rf"\({len(types)} characters, over \d+ lines, joined as they are\):$", lines[start])
    folded = [line[len("    #   "):] for line in lines[start + 1:] if line.startswith("    #   ")]
    assert "".join(folded) == types
    # the project's own KTAP reader sees the diagnostics as diagnostics, none as a key with a cut value
    said = [d.text for test in ktap.read(lines).tests if test.subtest for sub in test.subtest.tests
            for d in sub.diagnostics]
    assert not any(text.startswith("record_types=") for text in said) and len(said) > len(types) // LINE_MAX


def test_the_ktap_checker_catches_broken_documents(catalogue: Catalogue) -> None:
    good = render_ktap(OLD, catalogue).splitlines()
    assert ktap_problems(good[1:])[0] == "the first line is not 'KTAP version 1' (line 1)"
    renumbered = [line.replace("ok 2 watermark_poll", "ok 3 watermark_poll") for line in good]
    where = renumbered.index("    ok 3 watermark_poll") + 1  # the whole document's line, not the subtest's
    assert ktap_problems(renumbered) == [f"in root: result 3 where 2 was next (line {where})"]
    doubled = [line.replace("exactly_once", "watermark_poll") for line in good]
    assert any(p.startswith("in root: watermark_poll reported twice (line") for p in ktap_problems(doubled))
    last_subtest = max(i for i, line in enumerate(good) if line == "    KTAP version 1") + 1
    assert ktap_problems(good[:-1]) == [f"a subtest with no result line after it (line {last_subtest})",
                                        "planned 3, reported 2 (line 4)"]


def ktap_problems(lines: list[str]) -> list[str]:
    """What breaks ktap.rst, from the one KTAP reader."""
    return ktap.read(lines).all_problems()


def test_junit_is_read_back_by_a_real_junit_reader(tmp_path: Path, catalogue: Catalogue) -> None:
    path = tmp_path / "junit.xml"
    path.write_text(render_junit([OLD, REGRESSED, DEAD], catalogue))
    suites = {suite.name: suite for suite in JUnitXml.fromfile(str(path))}
    assert set(suites) == {"6.1.0-57-amd64/root", "6.1.0-57-amd64/user-paranoid3", "6.12.9-amd64/root",
                           "7.0.1-amd64/root", "6.1.0-57-amd64/kernel", "6.12.9-amd64/kernel", "7.0.1-amd64/kernel"}
    results = {(name, c.name): [type(r) for r in c.result] for name, s in suites.items() for c in s}
    assert results[("6.1.0-57-amd64/root", "watermark_sigio")] == [Skipped]  # a known failure, as pytest's xfail
    xfail = next(c for c in suites["6.1.0-57-amd64/root"] if c.name == "watermark_sigio").result[0]
    assert xfail.type == "pytest.xfail" and "fd20bb51ed39" in xfail.message
    assert results[("6.1.0-57-amd64/root", "exactly_once")] == [Error]
    assert results[("6.1.0-57-amd64/user-paranoid3", "refused whole")] == [Skipped]  # the pass's one skip
    refused = next(iter(suites["6.1.0-57-amd64/user-paranoid3"])).result[0]
    assert refused.message.startswith("[user-paranoid3] refused whole: 1 of 1 cases skipped: perf_event_open: EACCES")
    assert results[("6.12.9-amd64/root", "watermark_sigio")] == [Failure]
    assert results[("7.0.1-amd64/root", "watermark_sigio")] == [Failure]  # lost: the kernel died before it ran
    failure = next(c for c in suites["6.12.9-amd64/root"] if c.name == "watermark_sigio").result[0]
    assert "regression" in failure.message and "signals=0" in failure.message  # the evidence in the message
    assert suites["6.12.9-amd64/root"].failures == 1 and suites["6.1.0-57-amd64/root"].errors == 1
    # what a reader filters by, as properties; messages that say the verdict once and no empty evidence
    properties = {p.name: p.value for p in suites["6.1.0-57-amd64/root"].properties()}
    assert properties["kernel"] == "6.1.0-57-amd64" and properties["sigwake_commit"] == OLD.sigwake_commit
    assert properties["origin"] == OLD.origin.describe() and "partial" not in properties
    messages = [r.message for s in suites.values() for c in s for r in c.result if r.message]
    assert not any(m.endswith(" []") for m in messages), messages
    assert not any(re.match(r"([a-z-]+): \1:", m) for m in messages), messages


def test_the_committed_results_render_in_every_format(tmp_path: Path, catalogue: Catalogue) -> None:
    results = tmp_path / "results"
    shutil.copytree(COMMITTED, results)
    written = write_reports(results, ReportOptions(), catalogue)
    assert {p.name for p in written} >= {"matrix.md", "junit.xml", "submission.json", "index.html"}
    for document in (results / "ktap").glob("*.ktap"):
        assert ktap_problems(document.read_text().splitlines()) == [], document
    kcidb_reader.validate(json.loads((results / "kcidb" / "submission.json").read_text()))
    assert load_results(results).unreadable == []  # no report is mistaken for a result file
    JUnitXml.fromfile(str(results / "junit.xml"))
    summary = render(results, "summary", ReportOptions(), catalogue)
    assert summary.count("\n") >= len(list(COMMITTED.glob("*.json")))
    assert "watermark_sigio not-delivered" in summary and summary.splitlines()[-1].startswith("findings: ")


CRASH = Path(__file__).parent / "data" / "crash-cloud-6.12.95"  # results/ of sigwake 05cf824c3a89, schema 2


def test_a_kernel_that_oopsed_mid_run_is_never_none(tmp_path: Path, catalogue: Catalogue) -> None:
    # The cloud 6.12.95 kernel that oopsed mid-run, as an older sigwake recorded it (schema 2: no splats): its
    # crash is read back from its console log, attributed to the case that ran, and the last line counts it.
    shutil.copytree(CRASH, tmp_path / "results")
    summary = render(tmp_path / "results", "summary", ReportOptions(), catalogue)
    crash = next(line for line in summary.splitlines() if ": crash: " in line)
    assert crash.startswith("finding: 6.12.95+deb12-cloud-amd64: crash: the boot ended in PANIC: double fault in "
                            "alloc_pid [follows the emulator: ")  # recorded under QEMU 7.2's TCG
    assert crash.endswith("] ([user-paranoid1] set_output_sigio_fasync_on_source)")
    assert summary.splitlines()[-1] == "findings: 34 (1 crash, 33 lost)"
    kcidb = json.loads(render(tmp_path / "results", "kcidb", ReportOptions(), catalogue))
    assert {t["path"]: t["status"] for t in kcidb["tests"]}["boot"] == "FAIL"
    junit = JUnitXml.fromstring(render(tmp_path / "results", "junit", ReportOptions(), catalogue))
    suites = {suite.name: suite for suite in junit}
    cut = suites["6.12.95+deb12-cloud-amd64/user-paranoid1"]
    assert cut.failures == 7 and cut.errors == 0  # the case it cut off and the 6 programs after it: all lost, findings


def test_a_truncated_or_foreign_result_is_named_and_the_rest_still_render(tmp_path: Path, catalogue: Catalogue) -> None:
    write_result(tmp_path, OLD)
    (tmp_path / "cut.json").write_text(json.dumps(to_data(REGRESSED))[:300])
    (tmp_path / "foreign.json").write_text('{"hello": "world"}')
    for fmt in ("summary", "markdown", "html"):
        text = render(tmp_path, fmt, ReportOptions(), catalogue)
        assert "cut.json" in text and "foreign.json" in text, fmt
        assert "6.1.0-57-amd64" in text, fmt
    assert "6.1.0-57-amd64" in render(tmp_path, "ktap", ReportOptions(), catalogue)


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


def test_the_html_page_renders_in_a_real_browser(tmp_path: Path, catalogue: Catalogue) -> None:
    chromium = shutil.which("chromium")
    assert chromium is not None, "chromium is missing: ./sigwake setup installs it for the tests"
    page = tmp_path / "index.html"
    page.write_text(render_html([OLD, REGRESSED, DEAD], catalogue))
    flags = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1200,900"]
    dom = subprocess.run([*flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120,
                         check=True).stdout
    cells = Cells()
    cells.feed(dom)
    assert cells.tables == 1  # root; user-paranoid3, refused whole, is a line above where its table would be
    assert cells.cells == {"xfail": 1, "pass": 2, "error": 1, "fail": 1, "miss": 1}
    assert "6.1.0-57-amd64: [user-paranoid3] refused whole: 1 of 1 cases skipped" in dom
    assert cells.points == ["6.1.0-57-amd64=not-delivered", "6.12.9-amd64=not-delivered", "7.0.1-amd64=boot-failed"]
    assert not cells.boundary  # no kernel here delivers: no boundary to draw
    screenshot = tmp_path / "shot.png"
    subprocess.run([*flags, f"--screenshot={screenshot}", page.as_uri()], capture_output=True, timeout=120, check=True)
    assert png_colours(screenshot.read_bytes()) > 20  # drawn, not blank


def test_the_picture_draws_the_boundary_where_the_signal_starts(tmp_path: Path, catalogue: Catalogue) -> None:
    fixed = kernel("6.12.118-amd64", "6.12.118-amd64", [case("watermark_sigio", D)])
    cells = Cells()
    cells.feed(render_html([fixed, OLD], catalogue))  # given out of order: drawn in version order
    assert cells.points == ["6.1.0-57-amd64=not-delivered", "6.12.118-amd64=delivered"]
    assert cells.boundary
    # six 6.1 kernels fill the first row; a failed boot opens the second, then the first delivering kernel: the
    # line is drawn on its row, and the failed boot says nothing of where the signal starts
    olds = [kernel(f"6.1.0-{n}-amd64", f"6.1.0-{n}-amd64", [case("watermark_sigio", N)]) for n in range(50, 56)]
    failed = kernel("6.2.0-1-amd64", "6.2.0-1-amd64", [case("watermark_sigio", Verdict.BOOT_FAILED)])
    picture = _picture(sorted([fixed, failed, *olds], key=KernelResult.order))
    assert [p["y"] for p in picture["points"]] == [0] * 6 + [140] * 2
    assert picture["boundary"] == {"x": 185, "y": 140}  # between the failed boot and 6.12.118, on the second row
    assert _picture(sorted([failed, fixed], key=KernelResult.order))["boundary"] is None


def test_the_page_says_which_commit_ran_which_kernels(catalogue: Catalogue) -> None:
    def header(kernels: list[KernelResult]) -> str:
        return re.search(r"regenerated from the result files beside this page \((.*?)\)\.", render_html(kernels,
                                                                                                      catalogue))[1]
    later = [dataclasses.replace(k, sigwake_commit="def456") for k in (REGRESSED, DEAD)]
    assert header([OLD, REGRESSED]) == "sigwake abc123"
    assert header([OLD, *later]) == "sigwake def456 for 6.12.9-amd64, 7.0.1-amd64; abc123 for 6.1.0-57-amd64"
    many = [kernel(f"6.1.0-{n}-amd64", f"6.1.0-{n}-amd64", [case("watermark_sigio", N)]) for n in range(50, 54)]
    assert header([*many, *later]) == "sigwake abc123 for 4 kernels; def456 for 6.12.9-amd64, 7.0.1-amd64"


# Injected into a copy of the page (the page itself has no script): scroll the first matrix down and right, and
# say where its header row, its case column and a data cell were before and after.
PROBE = """<script>
const box = document.querySelector('.scroll:has(table)'), head = box.querySelector('tr:first-child th:nth-child(3)');
const row = box.querySelectorAll('tr')[6], caseCell = row.querySelector('th'), cell = row.querySelector('td');
const at = () => [head.getBoundingClientRect().top, caseCell.getBoundingClientRect().left,
                  cell.getBoundingClientRect().left, cell.getBoundingClientRect().top];
const before = at(); box.scrollTop = 150; box.scrollLeft = 600; const after = at();
const out = document.createElement('pre'); out.id = 'probe';
const picture = document.getElementById('watermark-picture');
out.textContent = JSON.stringify({before, after, page: document.documentElement.scrollWidth,
                                  first: document.querySelector('h2').id,
                                  picture: picture.parentElement.scrollWidth <= picture.parentElement.clientWidth,
                                  caseWidth: caseCell.getBoundingClientRect().width});
document.body.appendChild(out);
</script>"""


def test_the_page_puts_findings_first_and_keeps_its_header_and_case_column_while_scrolling(tmp_path: Path, catalogue: Catalogue) -> None:
    results = tmp_path / "results"
    shutil.copytree(COMMITTED, results)
    shutil.copytree(CRASH, results, dirs_exist_ok=True)  # the kernel that oopsed, among the others
    write_reports(results, ReportOptions(), catalogue)
    page = (results / "index.html").read_text()
    assert "PANIC: double fault in alloc_pid" in page.split('id="qa"')[0]  # the crash, above all else
    probe = results / "probe.html"
    probe.write_text(page.replace("</body>", PROBE + "</body>"))
    chromium = shutil.which("chromium")
    assert chromium is not None, "chromium is missing: ./sigwake setup installs it for the tests"
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1400,900",
                          "--virtual-time-budget=3000", "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    found = json.loads(dom.split('<pre id="probe">')[1].split("</pre>")[0])
    (head_top, case_left, cell_left, cell_top), after = found["before"], found["after"]
    assert found["first"] == "findings-title"  # findings are the page's first section
    assert after[0] == pytest.approx(head_top, abs=1) and after[1] == pytest.approx(case_left, abs=1)
    assert after[2] < cell_left - 300 and after[3] < cell_top - 100  # while the cells did move
    assert found["page"] <= 1400  # the page itself fits 1400 px; the matrix scrolls in its box
    assert found["picture"]  # the watermark picture fits without scrolling: its kernels wrap into rows
    assert found["caseWidth"] <= 16 * 14 + 20  # a long case name wraps in its column (16em, padding and border)
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page


def test_junit_counts_every_finding_the_summary_counts(catalogue: Catalogue) -> None:
    """A crash, a report outside every case, a flavour or a peer is the kernel's, not a case's: each is a failure
    of the kernel's own suite (its boot, or a test case of its own), so JUnit's failures and the reproducers'
    errors are the findings."""
    loaded = load_results(COMMITTED).results
    suites = JUnitXml.fromstring(render_junit(loaded, catalogue))
    failures = [r for s in suites for c in s for r in c.result if isinstance(r, Failure)]
    errors = [r for s in suites for c in s for r in c.result if isinstance(r, Error) and r.type == "error"]
    found = findings(loaded, catalogue)
    assert len(failures) + len(errors) == len(found) > 0  # the reproducers' errors: errors
    lost = sum(f.kind == "lost" for f in found)  # the cases the committed crash lost, each a failure
    assert sum(f.type == "lost" for f in failures) == lost > 0
    boots = {s.name: next(iter(s)) for s in suites if s.name.endswith("/kernel") and not s.name.startswith("host-")}
    assert len(boots) == len(loaded) - 1 and all(c.name == "boot" for c in boots.values())  # the host: no boot
    crashed = [name for name, c in boots.items() if any(isinstance(r, Failure) for r in c.result)]
    assert crashed == ["6.12.95+deb12-cloud-amd64/kernel"]  # the committed double fault
    assert not any(f.message.startswith(("delivered:", "measured:")) for f in failures)  # said as the finding
