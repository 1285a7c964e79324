"""sigwake's KTAP read by the kernel's own reader, tools/testing/kunit/kunit_parser.py from Debian's
linux-source-6.12 (the tarball the kernel-source tests build from): a known failure reads as a failure (it
knows no XFAIL and falls back to "not ok"), a pass refused whole as one skip, and the committed results' KTAP
parses with no error."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from sigwake.core.progress import Progress
from sigwake.kernels.kernels import KernelCache
from sigwake.programs.catalogue import Catalogue
from sigwake.reports.render_ktap import render_ktap
from sigwake.reports.report import ReportOptions, write_reports
from test_reports import COMMITTED, OLD

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def kunit_parser(cache_root: Path, tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    tarball = KernelCache(cache_root).source_tarball("6.12", Progress(quiet=True))
    into = tmp_path_factory.mktemp("kunit")
    subprocess.run(["tar", "-xJf", str(tarball), "-C", str(into), "--wildcards", "*/tools/testing/kunit/kunit_*.py"],
                   check=True, timeout=600)
    (tools,) = into.glob("*/tools/testing/kunit")
    sys.path.insert(0, str(tools))
    try:
        return importlib.import_module("kunit_parser")
    finally:
        sys.path.remove(str(tools))


def statuses(test: object, into: dict[str, str] | None = None, prefix: str = "") -> dict[str, str]:
    """Every test kunit_parser read, by its path ("root.watermark_sigio"), as its TestStatus name."""
    found = into if into is not None else {}
    for sub in test.subtests:  # type: ignore[attr-defined]
        path = f"{prefix}{sub.name}"
        found[path] = sub.status.name
        statuses(sub, found, path + ".")
    return found


def test_known_failures_and_refused_passes_as_the_kernels_reader_reads_them(kunit_parser: ModuleType,
                                                                           catalogue: Catalogue) -> None:
    read = kunit_parser.parse_run_tests(render_ktap(OLD, catalogue).splitlines())
    assert statuses(read) == {"kernel": "SUCCESS", "kernel.boot": "SUCCESS",  # its boot, and nothing beside
                              "root": "FAILURE", "root.watermark_sigio": "FAILURE",  # the known failure: visible
                              "root.watermark_poll": "SUCCESS", "root.exactly_once": "FAILURE",
                              "user-paranoid3": "SKIPPED", "user-paranoid3.refused-whole": "SKIPPED"}  # nothing ran
    assert read.counts.errors == 0


def test_the_committed_results_ktap_parses_with_no_error(kunit_parser: ModuleType, catalogue: Catalogue,
                                                         tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(COMMITTED, results)
    write_reports(results, ReportOptions(), catalogue)
    documents = sorted((results / "ktap").glob("*.ktap"))
    assert documents
    for document in documents:
        read = kunit_parser.parse_run_tests(document.read_text().splitlines())
        assert read.counts.errors == 0, document.name
        assert read.counts.total() > 0, document.name
