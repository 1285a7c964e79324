"""Flavours and `sigwake qa`, fast: the default set per flavour (matched against
real Debian package names), the flavour of a package, findings where a flavour
differs from its generic twin, the QA line's grouping, order and sentence, and
the QA table in the reports (the page read by a real browser). The real run and
bisection are in test_qa_debian.py."""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from sigwake.programs.catalogue import Catalogue
from sigwake.judge.flavours import flavour_findings
from sigwake.kernels.kernels import DebianQuery, KernelSpecError, arches_of, default_kernels, expand_specs, flavours_of
from sigwake.core.model import LOCAL, KernelResult, Origin, QaBoundary, QaLine, QaStep
from sigwake.commands.orchestrator import RunConfig, RunSummary
from sigwake.judge.change import verdict_changes
from sigwake.commands.qa import QaConfig, lines_of, qa_queries
from sigwake.reports.render_html import render_html
from sigwake.reports.render_markdown import render_matrix
from sigwake.reports.report import ReportOptions, write_reports
from sigwake.store.store import QA_FILE, load_qa, write_qa, write_result
from sigwake.core.verdicts import Verdict

from test_reports import D, N, case, kernel


@pytest.mark.parametrize("flavour, arch, matches, not_matches", [
    ("generic", "amd64", ["linux-image-6.1.0-57-amd64", "linux-binary-7.2.13+deb14-amd64"],
     ["linux-image-6.1.0-57-rt-amd64", "linux-image-6.1.0-57-amd64-dbg", "linux-image-6.1.0-57-amd64-unsigned"]),
    ("rt", "amd64", ["linux-image-6.1.0-57-rt-amd64", "linux-image-6.12.95+deb12-rt-amd64"],
     ["linux-image-6.1.0-57-amd64", "linux-image-6.1.0-57-rt-amd64-dbg"]),
    ("cloud", "amd64", ["linux-image-6.12.118+deb13-cloud-amd64"], ["linux-image-6.12.118+deb13-amd64"]),
    ("16k", "arm64", ["linux-image-6.12.43+deb13-arm64-16k"], ["linux-image-6.12.43+deb13-arm64"]),
])
def test_each_flavour_has_its_default_set(flavour: str, arch: str, matches: list[str], not_matches: list[str]) -> None:
    queries = default_kernels(flavour, arch)
    assert [q.suite for q in queries] == ["bookworm", "bookworm-backports", "trixie", "sid"]
    for name in matches:
        assert any(re.fullmatch(q.pattern, name) for q in queries), name
        assert (Origin("debian", name).arch, Origin("debian", name).flavour) == (arch, flavour)
    for name in not_matches:
        assert not any(re.fullmatch(q.pattern, name) for q in queries), name


def test_flavours_are_named_or_refused() -> None:
    assert flavours_of("all") == ("all",) and flavours_of("rt,16k", ("amd64", "arm64")) == ("rt", "16k")
    with pytest.raises(KernelSpecError, match="Debian's amd64 kernels come as generic, cloud, rt"):
        flavours_of("16k")
    with pytest.raises(KernelSpecError, match="sigwake boots amd64, arm64 kernels"):
        arches_of("riscv64")
    specs = expand_specs(("default", "host"), ("generic", "rt"))
    assert len(specs) == 9 and specs[-1] == "host" and isinstance(specs[0], DebianQuery)
    every = [q for q in expand_specs(("default",), ("all",), ("amd64", "arm64")) if isinstance(q, DebianQuery)]
    assert len(every) == 4 * (3 + 4) and {q.flavour for q in every if q.arch == "arm64"} == {"generic", "cloud",
                                                                                          "rt", "16k"}
    assert [q.flavour for q in expand_specs(("default",), ("16k",), ("amd64", "arm64"))][:1] == ["16k"]
    assert Origin("file", path="/x/bzImage").flavour is None


def debian(kernel_id: str, package: str, version: str, suite: str, verdict: Verdict) -> KernelResult:
    result = kernel(kernel_id, kernel_id, [case("watermark_sigio", verdict)])
    return dataclasses.replace(result, origin=Origin("debian", package, version, suite, sha256=result.origin.sha256))


GENERIC_61 = debian("6.1.0-57-amd64", "linux-image-6.1.0-57-amd64", "6.1.192-3", "bookworm", N)
RT_61 = debian("6.1.0-57-rt-amd64", "linux-image-6.1.0-57-rt-amd64", "6.1.192-3", "bookworm", D)
CLOUD_61 = debian("6.1.0-57-cloud-amd64", "linux-image-6.1.0-57-cloud-amd64", "6.1.192-3", "bookworm", N)
RT_612 = debian("6.12.95+deb12-rt-amd64", "linux-image-6.12.95+deb12-rt-amd64", "6.12.95-1~bpo12+1",
                "bookworm-backports", D)


def test_a_flavour_that_differs_from_its_generic_twin_is_a_finding(tmp_path: Path, catalogue: Catalogue) -> None:
    panicked = dataclasses.replace(CLOUD_61, reproducers=[case("watermark_sigio", Verdict.BOOT_FAILED)])
    assert flavour_findings([panicked, GENERIC_61]) == []  # a failed boot is its own report, not a behaviour
    findings = flavour_findings([RT_612, CLOUD_61, RT_61, GENERIC_61])
    assert [str(f) for f in findings] == [
        "6.1.0-57-rt-amd64 (root) watermark_sigio: delivered, where the generic 6.1.0-57-amd64 is not-delivered"]
    matrix = render_matrix([GENERIC_61, RT_61, CLOUD_61], catalogue)
    assert ("- 6.1.0-57-rt-amd64: flavour: 6.1.0-57-rt-amd64 (root) watermark_sigio: delivered, where the generic "
            "6.1.0-57-amd64 is not-delivered") in matrix
    assert "| 6.1.0-57-rt-amd64 | 6.1.0-57-rt-amd64 | amd64 rt |" in matrix
    assert "flavour:" not in render_matrix([GENERIC_61], catalogue)
    # a flavour whose runs split where its twin's agree is a finding too (it was dropped before)
    split = dataclasses.replace(RT_61, reproducers=[dataclasses.replace(
        case("watermark_sigio", Verdict.FLAKY), runs={"not-delivered": 2, "delivered": 1})])
    assert [f.case for f in flavour_findings([split, GENERIC_61])] == ["watermark_sigio"]
    # a local package file of the same version is nobody's twin: its version names no build of Debian's
    local = dataclasses.replace(GENERIC_61, kernel_id="deb-6.1.0-57-amd64-0a1b2c3d",
                                origin=dataclasses.replace(GENERIC_61.origin, suite=LOCAL, path="/tmp/x.deb"))
    assert flavour_findings([RT_61, local]) == [] and flavour_findings([local, RT_61, GENERIC_61]) == findings[:1]
    local_rt = dataclasses.replace(RT_61, origin=dataclasses.replace(RT_61.origin, suite=LOCAL))
    assert flavour_findings([local_rt, GENERIC_61]) == []
    # nor is it Debian's checkout in KCIDB: its own bytes are
    from sigwake.reports.kcidb_sources import checkout
    assert checkout(local, "sigwake")["id"] != checkout(GENERIC_61, "sigwake")["id"]
    assert "local package file" in checkout(local, "sigwake")["comment"]


def qa_config(tmp_path: Path, flavours: tuple[str, ...]) -> QaConfig:
    run = RunConfig(Path("."), Path("."), tmp_path, tmp_path / "results", ())
    return QaConfig(run, ("amd64",), flavours, ("bookworm", "bookworm-backports"))


def test_qa_lines_group_order_and_name_what_is_missing(tmp_path: Path) -> None:
    queries = qa_queries(qa_config(tmp_path, ("generic", "rt")))
    assert [(q.suite, q.flavour) for q in queries] == [("bookworm", "generic"), ("bookworm-backports", "generic"),
                                                     ("bookworm", "rt"), ("bookworm-backports", "rt")]
    summary = RunSummary([RT_612, GENERIC_61, RT_61],
                         failures=["bookworm-backports amd64 generic: bookworm-backports has no package matching x"])
    generic, rt = lines_of(queries, summary)
    assert [s.version for s in rt.steps] == ["6.1.192-3", "6.12.95-1~bpo12+1"]  # Debian version order
    assert generic.missing == ["bookworm-backports amd64 generic: bookworm-backports has no package matching x"]
    assert rt.missing == [] and verdict_changes(rt) == []  # delivered on both: nothing to bisect


@pytest.mark.parametrize("verdicts, boundaries, sentence", [
    (["not-delivered", "delivered"], [("not-delivered", "delivered", "p1 1", "q 1.5")],
     "amd64 rt: not-delivered up to p1 1, delivered from q 1.5"),
    (["delivered", "delivered"], [], "amd64 rt: delivered on every package tested (p1 1 to p2 2)"),
    (["not-delivered", "delivered", "not-delivered"],
     [("not-delivered", "delivered", "p1 1", "q 1.5"), ("delivered", "not-delivered", "p2 2", "r 2.5")],
     "amd64 rt: not-delivered up to p1 1, delivered up to p2 2, not-delivered from r 2.5"),
])
def test_the_qa_sentence(verdicts: list[str], boundaries: list[tuple[str, str, str, str]], sentence: str) -> None:
    steps = [QaStep(f"p{i + 1}", str(i + 1), "bookworm", v) for i, v in enumerate(verdicts)]
    line = QaLine("amd64", "rt", steps, [QaBoundary(*b, how="") for b in boundaries])
    assert line.sentence() == sentence


def test_a_failed_boot_is_no_change_of_behaviour() -> None:
    steps = [QaStep("a", "1", "s", "not-delivered"), QaStep("b", "2", "s", "boot-failed"), QaStep("c", "3", "s", "delivered")]
    assert [(a.package, b.package) for a, b in verdict_changes(QaLine("amd64", "cloud", steps))] == [("a", "c")]


LINE = QaLine("amd64", "rt", [QaStep("linux-image-6.1.0-57-rt-amd64", "6.1.192-3", "bookworm", "not-delivered"),
                              QaStep("linux-image-6.12.95+deb12-rt-amd64", "6.12.95-1~bpo12+1", "bookworm-backports",
                                     "delivered")],
              [QaBoundary("not-delivered", "delivered", "linux-image-6.1.0-57-rt-amd64 6.1.192-3",
                          "linux-image-6.12.43+deb12-rt-amd64 6.12.43-1~bpo12+1", "judged 6 (6 judged, 0 skipped)")])


def test_the_qa_table_is_kept_and_a_broken_one_named(tmp_path: Path, catalogue: Catalogue) -> None:
    write_qa(tmp_path, [LINE])
    assert load_qa(tmp_path) == [LINE]
    write_result(tmp_path, GENERIC_61)
    write_reports(tmp_path, ReportOptions(), catalogue)
    assert LINE.sentence() in (tmp_path / "index.html").read_text()
    (tmp_path / QA_FILE).write_text("[{\"arch\": 1}]")
    write_reports(tmp_path, ReportOptions(), catalogue)  # the results still render; the QA file is named
    assert f"{tmp_path / QA_FILE}: not a sigwake QA file" in (tmp_path / "index.html").read_text()


def test_the_qa_table_renders_in_a_real_browser(tmp_path: Path, catalogue: Catalogue) -> None:
    chromium = shutil.which("chromium")
    assert chromium is not None, "chromium is missing: ./sigwake setup installs it for the tests"
    page = tmp_path / "index.html"
    page.write_text(render_html([GENERIC_61, RT_61], catalogue, qa=[LINE]))
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert len(re.findall(r'<tr class="qa-line" data-arch="amd64" data-flavour="rt">', dom)) == 1
    assert re.findall(r'class="qa-step" data-verdict="([a-z-]+)"', dom) == ["not-delivered", "delivered"]
    assert "not-delivered up to linux-image-6.1.0-57-rt-amd64 6.1.192-3, delivered from " \
           "linux-image-6.12.43+deb12-rt-amd64 6.12.43-1~bpo12+1" in dom
    assert "6.1.0-57-rt-amd64 (root) watermark_sigio: delivered, where the generic 6.1.0-57-amd64 is not-delivered" in dom
