"""validate-patch's comparison: what a patch did to each case, judged against the
behaviour of a kernel with every known fix, from the verdict and the evidence
that defines the case; and the mutant score's table."""

from __future__ import annotations

from pathlib import Path

import pytest

from sigwake.programs.catalogue import Catalogue
from sigwake.judge import expectations
from sigwake.targets.interpret import KernelOutcome
from sigwake.commands.mutants import MutantResult, table
from sigwake.core.model import BootRecord, ReproResult, Splat
from sigwake.judge.change import compare
from sigwake.commands.validate import pair
from sigwake.core.verdicts import Verdict

D, N, W, M = Verdict.DELIVERED, Verdict.NOT_DELIVERED, Verdict.WRONG_COUNT, Verdict.MEASURED


def result(name: str, verdict: Verdict, privilege: str = "root", **evidence: str) -> ReproResult:
    return ReproResult(name, verdict, "", dict(evidence), 1.0, privilege, {str(verdict): 3})


@pytest.mark.parametrize("case, before, after, outcome", [
    ("watermark_sigio", N, D, "fixes"),
    ("watermark_sigio", D, N, "regresses"),
    ("watermark_sigio", D, Verdict.NO_WAKEUP, "regresses"),
    ("watermark_sigio", D, D, "no change"),
    ("watermark_sigio", D, Verdict.ERROR, "lost"),  # the same programs failed only on the patched kernel
    ("watermark_sigio", Verdict.ERROR, D, "inconclusive"),
    ("watermark_sigio", Verdict.FLAKY, D, "inconclusive"),
    # a guard's correct behaviour is to stay quiet: starting to signal is a regression, not a fix
    ("wakeup_events_nonsample", Verdict.NO_WAKEUP, D, "regresses"),
    ("set_output_sigio_fasync_on_target", N, D, "regresses"),
    ("memlock_budget", M, W, "regresses"),
    ("watermark_sigio", N, Verdict.NO_WAKEUP, "changes"),
])
def test_verdict_changes(case: str, before: Verdict, after: Verdict, outcome: str, catalogue: Catalogue) -> None:
    assert compare(result(case, before), result(case, after), catalogue) == (outcome, (), "")


def split(name: str, runs: dict[str, int]) -> ReproResult:
    return ReproResult(name, Verdict.FLAKY, "runs disagree", {}, 1.0, "root", runs)


@pytest.mark.parametrize("before, runs, outcome, how", [
    # a patch that loses the signal in 2 runs of 5 regresses it: never "inconclusive", never a pass
    (D, {"delivered": 3, "not-delivered": 2}, "regresses", "intermittent 2/5: not-delivered x2"),
    (D, {"delivered": 4, "error": 1}, "regresses", "intermittent 1/5: error x1"),
    # a patch that fixes it in some runs only: a change to look at, not a fix
    (N, {"delivered": 3, "not-delivered": 2}, "changes", "intermittent 2/5: not-delivered x2"),
])
def test_a_patched_kernel_whose_runs_split_is_a_finding(before: Verdict, runs: dict[str, int], outcome: str,
                                                        how: str, catalogue: Catalogue) -> None:
    change = pair(outcome_of(result("watermark_sigio", before)), outcome_of(split("watermark_sigio", runs)), catalogue)[0]
    assert (change.outcome, change.qualifier, change.is_finding) == (outcome, how, True)
    assert f"{outcome} ({how})" in str(change)


def test_a_splat_on_the_patched_kernel_regresses_the_case_whatever_its_verdict(catalogue: Catalogue) -> None:
    warn = Splat("warning", "WARNING in perf_event_wakeup", 120, "WARNING: ...", privilege="root",
                 case="watermark_sigio")
    base = outcome_of(result("watermark_sigio", D), result("watermark_poll", D))
    patched = KernelOutcome("6.12.0", BootRecord("ok"), [result("watermark_sigio", D), result("watermark_poll", D)],
                           {}, splats=[warn])
    changes = {c.case: c for c in pair(base, patched, catalogue)}
    assert changes["watermark_sigio"].outcome == "regresses"
    assert changes["watermark_sigio"].qualifier == "kernel splat: WARNING in perf_event_wakeup"
    assert changes["watermark_poll"].outcome == "no change"
    # the same report on both kernels is not the patch's doing
    assert pair(patched, patched, catalogue)[0].outcome == "no change"


def test_a_change_in_defining_evidence_is_reported_though_the_verdict_stays(catalogue: Catalogue) -> None:
    before = result("setsig_siginfo_watermark", D, si_code="1", si_band="0x41", records="4")
    after = result("setsig_siginfo_watermark", D, si_code="6", si_band="0x41", records="5")
    assert compare(before, after, catalogue) == ("regresses", ("si_code",), "")  # records are not defining: they may vary
    assert compare(before, before, catalogue) == ("no change", (), "")


def test_unprivileged_passes_are_judged_by_their_own_expectations(catalogue: Catalogue) -> None:
    refused = result("switch_support_cpu_wide", Verdict.UNSUPPORTED, "user-paranoid1")
    opened = result("switch_support_cpu_wide", D, "user-paranoid1")
    assert expectations.correct(catalogue, "switch_support_cpu_wide", "user-paranoid1") is Verdict.UNSUPPORTED
    assert compare(refused, opened, catalogue)[0] == "regresses"


def outcome_of(*results: ReproResult) -> KernelOutcome:
    return KernelOutcome("6.12.0", BootRecord("ok"), list(results), {})


def test_a_case_that_dies_or_vanishes_after_the_patch_is_reported(catalogue: Catalogue) -> None:
    died = ReproResult("watermark_sigio", Verdict.ERROR, "the program reported no case and ended: killed by signal 29",
                       {"ended": "killed by signal 29"}, None, "root", {"error": 3})
    changes = {c.case: c for c in pair(outcome_of(result("watermark_sigio", D), result("watermark_poll", D)),
                                       outcome_of(died, result("exactly_once", D)), catalogue)}
    assert changes["watermark_sigio"].outcome == "lost" and "killed by signal 29" in str(changes["watermark_sigio"])
    assert changes["watermark_poll"].outcome == "lost" and changes["watermark_poll"].after is None
    assert changes["exactly_once"].outcome == "appeared"


def test_the_mutant_table_names_the_cases_and_scores(catalogue: Catalogue) -> None:
    caught = MutantResult(Path("01-a.patch"), [pair(outcome_of(result("watermark_sigio", D)),
                                                    outcome_of(result("watermark_sigio", N)), catalogue)[0]])
    survivor = MutantResult(Path("02-b.patch"), [])
    broken = MutantResult(Path("03-c.patch"), build_error="make failed")
    text = table([caught, survivor, broken])
    assert "| 01-a | watermark_sigio [root] regresses: delivered -> not-delivered | detected |" in text
    assert "| 02-b | none | survived |" in text and "| 03-c | make failed | build failed |" in text
    assert "Score: 1 of 3 mutants detected." in text
