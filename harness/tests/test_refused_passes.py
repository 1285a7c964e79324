"""A pass the kernel refuses whole (Debian's perf_event_paranoid=3 for an unprivileged user) reads as one line
per kernel in every report, with the pass's cases that did run listed as ever; a pass refused only in part
keeps each skip."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from junitparser import JUnitXml

from sigwake.core.model import KernelResult
from sigwake.core.verdicts import Verdict
from sigwake.judge.judgement import judged_cases
from sigwake.judge.refused_passes import refused_whole, shown_passes
from sigwake.programs.catalogue import Catalogue
from sigwake.reports.render_html import render_html
from sigwake.reports.render_junit import render_junit
from sigwake.reports.render_kcidb import render_kcidb
from sigwake.reports.render_ktap import render_ktap
from sigwake.reports.render_markdown import render_matrix
from sigwake.reports.render_summary import render_summary
from test_reports import case, kernel

EACCES = "perf_event_open: EACCES: perf_event_paranoid or a missing capability refuses this event"
U = Verdict.UNSUPPORTED


def paranoid3(refused: int, ran: int, other_reason: int = 0) -> KernelResult:
    names = ["watermark_sigio", "watermark_poll", "exactly_once", "overflow_sigio", "urgent_sigurg_pgrp"]
    cases = [case(names[n], U, "user-paranoid3", EACCES) for n in range(refused)]
    cases += [case(names[refused + n], U, "user-paranoid3", "unshare: EPERM") for n in range(other_reason)]
    cases += [case("urgent_sigurg_setsig", Verdict.DELIVERED, "user-paranoid3") for _ in range(ran)]
    return kernel("6.1.0-57-amd64", "6.1.0-57-amd64", [case("watermark_poll", Verdict.DELIVERED), *cases])


@pytest.mark.parametrize("refused, ran, other, whole", [
    (3, 1, 0, True),  # 3 of 4 for one reason
    (2, 2, 0, False),  # half is not whole
    (2, 1, 1, False),  # 2 of 4 for the top reason: the other reason does not add to it
    (3, 1, 1, True),  # 3 of 5: whole; the other reason's skip is listed as ever, not folded
])
def test_a_pass_is_refused_whole_when_one_reason_skipped_more_than_half_of_it(
        refused: int, ran: int, other: int, whole: bool, catalogue: Catalogue) -> None:
    result = paranoid3(refused, ran, other)
    cases = judged_cases(result, catalogue)["user-paranoid3"]
    found = refused_whole("user-paranoid3", cases)
    assert (found is not None) is whole
    if found is not None:
        assert len(found.skipped) == refused and found.total == refused + ran + other and found.why == EACCES
        listed = next(p for p in shown_passes(result, catalogue) if p.privilege == "user-paranoid3").cases
        assert [j.why for j in listed if j.outcome.value == "skip"] == ["unshare: EPERM"] * other


def test_every_report_says_a_refused_pass_in_one_line(tmp_path: Path, catalogue: Catalogue) -> None:
    result = paranoid3(4, 1)
    names = "watermark_sigio, watermark_poll, exactly_once, overflow_sigio"
    line = f"[user-paranoid3] refused whole: 4 of 5 cases skipped: {EACCES} ({names})"
    (shown_root, shown_user) = shown_passes(result, catalogue)
    assert shown_root.refused is None and [j.name for j in shown_user.cases] == ["urgent_sigurg_setsig"]
    summary = render_summary([result], catalogue)
    assert f"refused whole: user-paranoid3 (4 of 5 cases: {EACCES})" in summary
    ktap = render_ktap(result, catalogue)
    assert "    1..2\n" in ktap and "    ok 1 refused-whole # SKIP refused whole: 4 of 5 cases skipped" in ktap
    assert f"    # refused cases: {names}\n" in ktap
    assert "    ok 2 urgent_sigurg_setsig\n" in ktap and ktap.count("# SKIP") == 1
    junit = {s.name: s for s in JUnitXml.fromstring(render_junit([result], catalogue))}
    user = junit["6.1.0-57-amd64/user-paranoid3"]
    assert [c.name for c in user] == ["refused whole", "urgent_sigurg_setsig"] and user.skipped == 1
    assert next(iter(user)).result[0].message == line
    kcidb = render_kcidb([result], catalogue, tmp_path)
    paths = {t["path"]: t for t in kcidb["tests"] if "user-paranoid3" in t["path"]}
    assert sorted(paths) == ["sigwake.user-paranoid3.refused-whole", "sigwake.user-paranoid3.urgent_sigurg_setsig"]
    refused = paths["sigwake.user-paranoid3.refused-whole"]
    assert refused["status"] == "SKIP" and refused["misc"]["names"] == names.split(", ")
    matrix = render_matrix([result], catalogue)
    section = matrix[matrix.index("## user-paranoid3"):].split("\n## ")[0]
    assert f"- 6.1.0-57-amd64: {line}" in section
    rows = [row.split(" | ")[0] for row in section.splitlines() if row.startswith("| ") and "reproducer" not in row]
    assert rows == ["| urgent_sigurg_setsig"]  # the grid keeps what ran; the refused cases are the line
    page = render_html([result], catalogue)
    assert re.search(r'<ul class="refused"><li>6\.1\.0-57-amd64: \[user-paranoid3\] refused whole', page)
    assert 'data-pass="user-paranoid3"' in page and page.count('class="refused"') == 1  # no folded cell: no other kernel


def test_a_kernel_that_did_not_refuse_keeps_its_cells_beside_one_that_did(catalogue: Catalogue) -> None:
    refused = paranoid3(4, 1)
    ran = kernel("6.12.9-amd64", "6.12.9-amd64", [case("watermark_sigio", Verdict.DELIVERED, "user-paranoid3"),
                                                  case("urgent_sigurg_setsig", Verdict.DELIVERED, "user-paranoid3")])
    matrix = render_matrix([refused, ran], catalogue)
    section = matrix[matrix.index("## user-paranoid3"):].split("\n## ")[0]
    row = next(r for r in section.splitlines() if r.startswith("| watermark_sigio |"))
    assert row.startswith("| watermark_sigio | refused ↑ | ") and "**delivered**" in row


def test_a_pass_refused_in_part_keeps_each_skip(catalogue: Catalogue) -> None:
    result = paranoid3(2, 2)
    ktap = render_ktap(result, catalogue)
    assert ktap.count("# SKIP") == 2 and "refused whole" not in ktap
    assert "refused whole" not in render_summary([result], catalogue)
