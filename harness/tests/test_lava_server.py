"""The whole lab path, for real: a lava-server with its PostgreSQL and a worker on
this machine (tests/lava_lab.py), `run --target lava` submitting through the
API, the results read back into results/ as a local run's are; and what a lab
gets wrong (a wrong token, a device type it lacks, a job that never starts, a
job that fails) recorded, never lost, never a hang."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from conftest import spec
from lava_lab import ADMIN_TOKEN, LocalLava, differences_from_local, local_lava
from sigwake.programs.catalogue import Catalogue
from sigwake.commands.cli import REPO
from sigwake.kernels.kernels import Kernel
from sigwake.judge.lava_results import lava_table
from sigwake.targets.lava_api import LavaServer
from sigwake.targets.lava_job import default_files
from sigwake.targets.lava_target import LavaLab
from sigwake.commands.orchestrator import RunConfig, RunSummary, run_kernels
from sigwake.core.progress import Progress
from sigwake.reports.report import ReportOptions, write_reports
from image_files import corrupt_bzimage
from sigwake.store.store import load_result
from sigwake.core.verdicts import Verdict

pytestmark = [pytest.mark.skipif(any(shutil.which(t) is None for t in ("lava-server", "lava-worker", "lavacli")),
                                 reason="LAVA is not installed (./sigwake test installs lava-server, lava-dispatcher, "
                                        "lavacli)"),
              # One lab per suite, beside the dispatcher's tests: they share /var/lib/lava/dispatcher and its logs.
              pytest.mark.xdist_group("local-run")]


@pytest.fixture(scope="module")
def lava() -> Iterator[LocalLava]:
    lab = local_lava()
    try:
        yield lab.start()
    finally:
        lab.stop()
        shutil.rmtree(lab.root, ignore_errors=True)


def lab_of(lava: LocalLava, tmp_path: Path, token: str = ADMIN_TOKEN, device_type: str = "qemu",
           start_timeout_s: float = 600) -> LavaLab:
    return LavaLab(LavaServer(lava.url, token), default_files(tmp_path / "files"), lava_table, device_type,
                   start_timeout_s, 1.0)


def run_on(lab: LavaLab, specs: tuple[str, ...], tmp_path: Path, cache_root: Path, catalogue: Catalogue,
           jobs: int = 2) -> RunSummary:
    config = RunConfig(REPO, REPO / "build", cache_root, tmp_path / "results", specs, jobs=jobs, lab=lab)
    summary = run_kernels(config, Progress(quiet=True))
    write_reports(tmp_path / "results", ReportOptions(), catalogue)  # as `sigwake run` does after the run
    return summary


def lavacli(lava: LocalLava, *args: str) -> str:
    uri = f"http://admin:{ADMIN_TOKEN}@127.0.0.1:{lava.http_port}/RPC2"
    done = subprocess.run(["lavacli", "--uri", uri, *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "HOME": str(lava.root)})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_lab_runs_each_kernel_as_a_job(lava: LocalLava, local_run: RunSummary, kernel_6_1: Kernel,
                                         kernel_6_12: Kernel, cache_root: Path, tmp_path: Path,
                                         catalogue: Catalogue) -> None:
    garbage = tmp_path / "vmlinuz-garbage"
    garbage.write_bytes(corrupt_bzimage())
    summary = run_on(lab_of(lava, tmp_path), (spec(kernel_6_1), spec(kernel_6_12), str(garbage)), tmp_path,
                     cache_root, catalogue, jobs=3)
    assert summary.failures == []
    local = {r.kernel_id: r for r in local_run.results}
    for result in summary.results[:2]:
        differing = differences_from_local(result.boot, result.reproducers, local[result.kernel_id].reproducers)
        assert differing == [], differing
        assert result.runner.mode == "lava" and result.release == local[result.kernel_id].release
        assert result.origin.lava_job_url == f"{lava.url}/scheduler/job/{result.origin.lava_job}"
        stored = load_result(tmp_path / "results" / f"{result.kernel_id}.json")
        assert stored.origin.lava_job == result.origin.lava_job  # in results/ as a local run's are
        # LAVA's own account of the job, read with LAVA's own client.
        shown = yaml.safe_load(lavacli(lava, "jobs", "show", result.origin.lava_job or "", "--yaml"))
        assert shown["health"] == "Complete" and shown["device"] in ("qemu01", "qemu02")
    # The garbage image: LAVA's job failed; recorded as such, with LAVA's words; the others intact.
    failed = summary.results[2]
    assert failed.boot.status == "boot-failed" and f"LAVA job {failed.origin.lava_job} ended Incomplete" in \
        failed.boot.detail
    assert {c.verdict for c in failed.reproducers} == {Verdict.BOOT_FAILED}
    matrix = (tmp_path / "results" / "matrix.md").read_text()
    assert all(f"LAVA job {r.origin.lava_job}" in matrix for r in summary.results)


@pytest.mark.parametrize("token, device_type, start_timeout_s, status, said", [
    ("not-a-token", "qemu", 600, "boot-failed", "refused the token (Invalid token.)"),
    (ADMIN_TOKEN, "nosuch", 600, "boot-failed", "Device type 'nosuch' is unavailable"),
    (ADMIN_TOKEN, "qemu-aarch64", 5, "timeout", "did not start within 5 s (state Submitted); canceled"),
])
def test_what_a_lab_gets_wrong_is_recorded(lava: LocalLava, kernel_6_1: Kernel, cache_root: Path, tmp_path: Path,
                                           token: str, device_type: str, start_timeout_s: float, status: str,
                                           said: str, catalogue: Catalogue) -> None:
    summary = run_on(lab_of(lava, tmp_path, token, device_type, start_timeout_s), (spec(kernel_6_1),), tmp_path,
                     cache_root, catalogue)
    [result] = summary.results
    assert result.boot.status == status and said in result.boot.detail, result.boot.detail
    assert result.reproducers and all(c.verdict == Verdict(status) for c in result.reproducers)
    assert load_result(tmp_path / "results" / f"{result.kernel_id}.json").boot.detail == result.boot.detail
    if result.origin.lava_job:  # submitted but never started: the job was canceled, not left queued
        shown = yaml.safe_load(lavacli(lava, "jobs", "show", result.origin.lava_job, "--yaml"))
        assert shown["state"] in ("Canceling", "Finished")
