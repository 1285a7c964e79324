"""The report formats are a registry: each render_*.py with a FORMAT is one (a new format is one new file), the
command line offers exactly those, writing them writes each one's files, and printing one prints its files'
text. And the committed reports are what the committed results render to today: the reports did not change
behind the results' back (run `./sigwake report` after a change to a renderer or an expectation)."""

from __future__ import annotations

import pkgutil
import shutil
from pathlib import Path

import pytest

import sigwake.reports
from sigwake.programs.catalogue import Catalogue
from sigwake.commands.cli import parser
from sigwake.reports.report import FORMATS, REGISTRY, ReportOptions, render, write_reports
from sigwake.reports.report_input import load_input
from sigwake.core.protocol import PASSES
from sigwake.core.verdicts import Verdict

RESULTS = Path(__file__).resolve().parents[2] / "results"


def test_every_render_module_with_a_format_is_offered_and_nothing_else() -> None:
    modules = {m.name for m in pkgutil.iter_modules(sigwake.reports.__path__) if m.name.startswith("render_")}
    with_format = {m for m in modules if hasattr(__import__(f"sigwake.reports.{m}", fromlist=["FORMAT"]), "FORMAT")}
    assert len(with_format) == len(FORMATS)
    assert FORMATS == ("summary", "markdown", "ktap", "junit", "kcidb", "html")
    offered = next(a for a in parser()._subparsers._group_actions[0].choices["report"]._actions  # type: ignore[union-attr]
                   if a.dest == "format")
    assert tuple(offered.choices) == FORMATS


def test_writing_writes_every_format_s_files_and_printing_prints_them(tmp_path: Path, catalogue: Catalogue) -> None:
    results = tmp_path / "results"
    shutil.copytree(RESULTS, results, ignore=shutil.ignore_patterns("*.png"))
    given = load_input(results, ReportOptions(), catalogue)
    expected = {results / name for fmt in REGISTRY.values() for name in fmt.render(given) if name}
    assert set(write_reports(results, ReportOptions(), catalogue)) == expected
    for name, fmt in REGISTRY.items():
        assert render(results, name, ReportOptions(), catalogue) == "".join(fmt.render(given).values())
    with pytest.raises(ValueError, match="no report format 'pdf'"):
        render(results, "pdf", ReportOptions(), catalogue)


@pytest.mark.parametrize("fmt", ["markdown", "html", "ktap", "junit"])
def test_the_committed_reports_are_what_the_committed_results_render_to(fmt: str, catalogue: Catalogue) -> None:
    # Every committed report file of these formats (KCIDB's log URLs name the folder the results are in).
    given = load_input(RESULTS, ReportOptions(), catalogue)
    files = REGISTRY[fmt].render(given)
    assert files
    for name, text in files.items():
        assert (RESULTS / name).read_text() == text, (
            f"results/{name} is not what the stored results render to: run ./sigwake report --results results")


def test_the_matrix_reads_on_github_findings_by_kernel_first_a_full_legend_and_the_grids_folded(
        catalogue: Catalogue) -> None:
    matrix = render(RESULTS, "markdown", ReportOptions(), catalogue)
    order = [matrix.index(heading) for heading in ("## Findings by kernel", "## Findings\n", "## Legend", "## root")]
    assert order == sorted(order)  # what was found, by kernel, before any grid
    by_kernel = matrix.split("## Findings by kernel")[1].split("\n## ")[0]
    kernels = sorted(p.stem for p in RESULTS.glob("*.json") if p.name != "qa.json")
    assert sorted(line.split(" | ")[0][2:] for line in by_kernel.splitlines() if line.startswith("| ")
                  and not line.startswith("| kernel") and not line.startswith("|---")) == kernels
    legend = matrix.split("## Legend")[1].split("\n## ")[0]
    assert all(f"- **{v}**: {v.meaning}" in legend for v in Verdict)  # every word a cell can hold
    passes = [line[3:] for line in matrix.splitlines() if line[3:] in PASSES and line.startswith("## ")]
    assert passes and matrix.count("<details>") == len(passes) + 1 == matrix.count("</details>")


def test_a_kernel_that_could_not_be_tested_is_never_read_as_clean(catalogue: Catalogue) -> None:
    from sigwake.core.model import BootRecord
    from sigwake.reports.render_markdown import render_matrix
    from test_judgement import case, kernel
    refused = kernel("7.0.1-amd64", [case("watermark_sigio", Verdict.BOOT_FAILED)],
                     BootRecord("boot-failed", 0.1, None, "QEMU exited with 1 before the init reported"))
    matrix = render_matrix([refused], catalogue, ["7.0.2-amd64.json: breaks kernel-result schema 10 at boot"])
    # the headline is the gate's, not the findings' alone: the kernel not tested, and the file no one read
    assert "**findings: none; not tested: 2**" in matrix
    assert "| 7.0.1-amd64 | – | not tested |" in matrix
    assert "**1 result files could not be read**" in matrix
