"""`sigwake qa` on Debian's real rt kernels: the newest package of two suites,
then the packages between them bisected to the first that delivers the signal."""

from __future__ import annotations

from pathlib import Path

import pytest

from sigwake.programs.catalogue import Catalogue
from sigwake.judge import expectations
from sigwake.programs.binaries import Binaries
from sigwake.commands.bisect import Probe
from sigwake.commands.cli import REPO
from sigwake.judge.flavours import flavour_findings
from sigwake.targets.options import RunOptions
from sigwake.kernels.kernels import Kernel
from sigwake.commands.orchestrator import RunConfig, RunSummary
from sigwake.core.progress import Progress
from sigwake.commands.qa import QaConfig, run_qa
from sigwake.targets.qemu import Accel
from sigwake.reports.report import ReportOptions, write_reports
from sigwake.store.store import load_qa

pytestmark = pytest.mark.slow


def upstream(package_version: str) -> tuple[int, ...] | None:
    name = package_version.split()[0]
    return expectations.upstream_version(name.removeprefix("linux-image-").removeprefix("linux-binary-"))


def test_qa_names_the_first_rt_package_that_delivers(built: Binaries, accel: Accel, cache_root: Path, tmp_path: Path,
                                                     local_run: RunSummary, kernel_6_1: Kernel, catalogue: Catalogue) -> None:
    results = tmp_path / "results"
    run = RunConfig(REPO, REPO / "build", cache_root, results, (), repeat=1)
    config = QaConfig(run, ("amd64",), ("rt",), ("bookworm", "bookworm-backports"))
    probe = Probe(built.select(["watermark_sigio"]), "watermark_sigio", "watermark_sigio",
                  RunOptions(accel, repeat=3, privileges=("root",)), tmp_path)
    [line], summary, _ = run_qa(config, lambda arch: probe, Progress(quiet=True))

    assert summary.failures == [] and line.missing == []
    assert [s.verdict for s in line.steps] == ["not-delivered", "delivered"]
    assert all(s.package.endswith("-rt-amd64") for s in line.steps)
    [boundary] = line.boundaries
    assert upstream(boundary.last_old) == (6, 1) and (upstream(boundary.first_new) or ()) >= (6, 10), boundary
    assert line.sentence() == (f"amd64 rt: not-delivered up to {boundary.last_old}, "
                               f"delivered from {boundary.first_new}")
    write_reports(results, ReportOptions(), catalogue)
    assert load_qa(results) == [line] and line.sentence() in (results / "index.html").read_text()
    # The rt 6.1 kernel is judged as its generic twin is, case by case, in every pass.
    rt_61 = next(r for r in summary.results if r.origin.version == kernel_6_1.origin.version)
    generic_61 = next(r for r in local_run.results if r.kernel_id == kernel_6_1.id)
    assert rt_61.origin.flavour == "rt" and flavour_findings([generic_61, rt_61]) == []
