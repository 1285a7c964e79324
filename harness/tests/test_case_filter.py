"""run --case: globs over case names (a program without cases by its name) name the only runs made; the host
expands them (Catalogue.named_runs) and the guest is given names, never globs; the result says which cases ran,
so it is never taken for a whole run."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sigwake.commands.cli import REPO, main
from sigwake.commands.orchestrator import RunConfig, recorded_before, run_kernels
from sigwake.core import protocol
from sigwake.core.progress import Progress
from sigwake.judge.gate import of_run
from sigwake.kernels.kernels import Kernel
from sigwake.programs.binaries import Binaries
from sigwake.programs.catalogue import Catalogue
from sigwake.reports.render_summary import render_summary
from sigwake.reports.report import ReportOptions, render
from sigwake.store.store import load_result, write_result
from sigwake.targets.boot_image import boot_arguments
from sigwake.targets.options import RunOptions
from sigwake.targets.qemu import Accel

from conftest import spec
from test_judgement import case, kernel
from sigwake.core.verdicts import Verdict


NAMED = ("exit_wakeup_sigio", "watermark_poll_rdnorm", "watermark_poll_without_ring")


def test_globs_name_cases_and_a_program_keeps_only_those(catalogue: Catalogue, built: Binaries) -> None:
    programs = sorted(built.reproducers)
    chosen = catalogue.cases_of(programs, ("watermark_poll_*", "exit_wakeup_sigio"))
    assert chosen == {"exit_wakeup": ("exit_wakeup_sigio",),
                      "watermark_poll": ("watermark_poll_rdnorm", "watermark_poll_without_ring")}
    assert catalogue.named_runs(programs, ("watermark_poll_*", "exit_wakeup_sigio")) == NAMED  # what the guest gets
    assert catalogue.cases_of(programs) == catalogue.cases_of(programs, ())  # no globs: every case
    assert catalogue.unmatched(("watermark_*", "no_such_*"), programs) == ["no_such_*"]
    assert sorted(built.with_cases(("watermark_poll_*", "exit_wakeup_sigio")).reproducers) == sorted(chosen)
    with pytest.raises(ValueError, match="--case no_such_case: names no case; there are .*watermark_sigio"):
        built.with_cases(("no_such_case",))


def test_the_globs_reach_the_guest_and_a_result_of_other_globs_is_not_resumed(tmp_path: Path, accel: Accel) -> None:
    arguments = boot_arguments(RunOptions(accel, cases=("watermark_poll", "overflow_sigio")))
    assert f"{protocol.KEYS['cases']}=watermark_poll,overflow_sigio" in arguments
    assert not any(a.startswith(protocol.KEYS["cases"]) for a in boot_arguments(RunOptions(accel)))
    stored = kernel("6.12.118+deb13-amd64", [case("watermark_sigio", Verdict.DELIVERED)])
    stored.runner = dataclasses.replace(stored.runner, programs="p", cases=["watermark_sigio"])
    write_result(tmp_path, stored)
    assert load_result(tmp_path / f"{stored.kernel_id}.json").runner.cases == ["watermark_sigio"]
    image = Kernel(stored.kernel_id, stored.origin, Path("/k"))
    assert recorded_before(tmp_path, image, "p", 1, ("watermark_sigio",)) is not None
    assert recorded_before(tmp_path, image, "p", 1) is None  # a whole run is not what was recorded
    assert recorded_before(tmp_path, image, "p", 1, ("overflow_sigio",)) is None


def test_a_glob_that_names_no_case_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--kernel", "host", "--case", "no_such_case", "--results", str(tmp_path), "--quiet"]) == 2
    assert "--case no_such_case: names no case" in capsys.readouterr().err


def test_only_the_named_cases_run_in_a_guest_and_natively(tmp_path: Path, kernel_6_12: Kernel, catalogue: Catalogue,
                                                         accel: Accel) -> None:
    globs = ("watermark_poll_*", "exit_wakeup_sigio")
    config = RunConfig(REPO, REPO / "build", Path.home() / ".cache" / "sigwake", tmp_path, (spec(kernel_6_12), "host"),
                       accel=accel.name, repeat=1, agree=1, jobs=1, cases=globs)
    summary = run_kernels(config, Progress(quiet=True))
    assert not summary.failures and len(summary.results) == 2
    for result in summary.results:
        assert result.runner.cases == list(NAMED)  # by name: what the guest was given
        ran = {(r.privilege, r.name) for r in result.reproducers}
        passes = {r.privilege for r in result.reproducers}
        assert ran == {(p, n) for p in passes for n in ("watermark_poll_rdnorm", "watermark_poll_without_ring", "exit_wakeup_sigio")}, \
            result.kernel_id
    assert "root" in {r.privilege for r in summary.results[0].reproducers}  # the guest ran its passes
    assert of_run(summary.results, catalogue).untested == []  # nothing asked for is missing
    said = render_summary(summary.results, catalogue)  # never read as a whole run
    partial = f"only {', '.join(NAMED)} (--case)"
    assert all(line.endswith(f"; {partial}") for line in said.splitlines()[:2])
    for fmt in ("markdown", "ktap", "html"):  # every report says it, not the summary alone
        assert partial in render(tmp_path, fmt, ReportOptions(), catalogue), fmt
