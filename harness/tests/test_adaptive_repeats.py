"""Adaptive repeats (repro/guest/case_loop.cc): a case whose first `agree` runs end alike stops there and
says so; one whose runs split runs every time `repeat` allows; the harness counts the runs left out as
asked for, never as lost. Run by the host's case loop (sigwake-run) over stand-in programs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from sigwake.core.verdicts import Verdict
from sigwake.parse.repeats import CaseRun, combine
from sigwake.programs.binaries import Binaries
from sigwake.targets import qemu
from sigwake.targets.host import run_host
from sigwake.targets.options import RunOptions


def run(built: Binaries, programs: dict[str, Path], tmp_path: Path, repeat: int, agree: int):
    binaries = dataclasses.replace(built, reproducers={path.name: path for path in programs.values()})
    options = RunOptions(qemu.Accel("none", "native"), repeat=repeat, agree=agree, privileges=("root",))
    console = tmp_path / "console.log"
    return run_host(binaries, options, console), console.read_text()


def test_a_case_whose_first_runs_agree_stops_and_one_that_splits_runs_every_time(
        built: Binaries, test_programs: dict[str, Path], tmp_path: Path) -> None:
    programs = {"liar": test_programs["liar"], "alternate": test_programs["alternate"]}
    outcome, console = run(built, programs, tmp_path, repeat=5, agree=2)
    assert outcome.boot.status == "native", outcome.boot.detail
    runs = {r.name: r.runs for r in outcome.reproducers}
    assert runs["liar"] == {"error": 2}  # the same ending twice: three runs left out
    assert runs["alternate"] == {"delivered": 3, "not-delivered": 2}  # split at its second: all five
    assert {r.name: r.verdict for r in outcome.reproducers}["alternate"] is Verdict.FLAKY
    assert console.count("sigwake.unneeded=") == 3
    assert console.count("# SKIP the first 2 runs agreed") == 3


def test_agree_at_repeat_runs_every_time(built: Binaries, test_programs: dict[str, Path], tmp_path: Path) -> None:
    outcome, console = run(built, {"liar": test_programs["liar"]}, tmp_path, repeat=3, agree=3)
    assert outcome.reproducers[0].runs == {"error": 3}
    assert "sigwake.unneeded=" not in console


def test_runs_left_out_as_agreed_are_asked_for_and_a_lost_run_is_still_an_error() -> None:
    ran = CaseRun("c", "root", Verdict.DELIVERED, "", {})
    agreed = combine([ran, dataclasses.replace(ran, left_out=3)], repeat=5)[0]
    assert agreed.verdict is Verdict.DELIVERED and agreed.runs == {"delivered": 2}
    lost = combine([ran, dataclasses.replace(ran, left_out=2)], repeat=5)[0]
    assert lost.verdict is Verdict.ERROR and lost.reason == "2 runs reported where 3 were asked"
