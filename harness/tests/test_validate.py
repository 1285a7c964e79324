"""validate-patch's comparison: what a patch did to each case, judged against the
behaviour of a kernel with every known fix, from the verdict and the evidence
that defines the case; and the mutant score's table."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sigwake.programs.catalogue import Catalogue
from sigwake.judge import expectations
from sigwake.targets.interpret import KernelOutcome
from sigwake.commands.mutants import MutantResult, table
from sigwake.core.model import BootRecord, ReproResult, Splat
from sigwake.judge.change import compare
from sigwake.commands.validate import new_reports, pair
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
    ("watermark_sigio", Verdict.ERROR, D, "could not test"),  # the base gave no verdict to hold the patch to
    ("watermark_sigio", Verdict.FLAKY, D, "could not test"),  # right after a base that split proves no fix
    # a guard's correct behaviour is to stay quiet: starting to signal is a regression, not a fix
    ("wakeup_events_nonsample", Verdict.NO_WAKEUP, D, "regresses"),
    ("set_output_sigio_fasync_on_target", N, D, "regresses"),
    ("memlock_budget", M, W, "regresses"),
    ("watermark_sigio", N, Verdict.NO_WAKEUP, "changes"),
])
def test_verdict_changes(case: str, before: Verdict, after: Verdict, outcome: str, catalogue: Catalogue) -> None:
    got = compare(result(case, before), result(case, after), catalogue)
    assert got[:2] == (outcome, ())
    assert bool(got[2]) == (before in (Verdict.ERROR, Verdict.FLAKY))  # said how, when the base gave no verdict


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


@pytest.mark.parametrize("base, after, outcome, how", [
    # the base split, the patched kernel is wrong in every run: a regression, not "could not test"
    ({"delivered": 3, "not-delivered": 2}, result("watermark_sigio", N), "regresses",
     "the base split (intermittent 2/5: not-delivered x2); wrong in every run after"),
    ({"delivered": 3, "not-delivered": 2}, split("watermark_sigio", {"not-delivered": 3, "no-wakeup": 2}), "regresses",
     "wrong in every run after"),
    # both split, the patched kernel right in some runs: nothing to hold it to
    ({"delivered": 3, "not-delivered": 2}, split("watermark_sigio", {"delivered": 1, "not-delivered": 4}),
     "could not test", "the base split"),
    # a base wrong in every run, split between wrong verdicts, and a patched kernel as wrong: no regression
    ({"not-delivered": 3, "no-wakeup": 2}, result("watermark_sigio", N), "could not test", "wrong in 5/5, verdicts differ"),
])
def test_a_base_whose_runs_split(base: dict[str, int], after: ReproResult, outcome: str, how: str,
                                 catalogue: Catalogue) -> None:
    got, _, said = compare(split("watermark_sigio", base), after, catalogue)
    assert got == outcome and how in said, said


def test_a_patched_kernel_wrong_in_every_run_says_so(catalogue: Catalogue) -> None:
    _, _, said = compare(result("watermark_sigio", D), split("watermark_sigio", {"not-delivered": 2, "no-wakeup": 1}),
                         catalogue)
    assert said == "wrong in 3/3, verdicts differ: not-delivered x2, no-wakeup x1"


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


def test_every_new_kernel_report_is_compared_in_a_case_or_outside(catalogue: Catalogue) -> None:
    def at(title: str, case: str | None, line: int) -> Splat:
        return Splat("warning", title, line, "WARNING: ...", privilege="root" if case else None, case=case)
    # the base warned once in the case; the patched kernel warned there twice, with a second title, and at boot
    base = KernelOutcome("6.12.0", BootRecord("ok"), [result("watermark_sigio", D)], {},
                         splats=[at("WARNING in perf_event_wakeup", "watermark_sigio", 10)])
    patched = KernelOutcome("6.12.0", BootRecord("ok"), [result("watermark_sigio", D)], {},
                            splats=[at("WARNING in perf_init", None, 3),
                                    at("WARNING in perf_event_wakeup", "watermark_sigio", 10),
                                    at("WARNING in perf_output_end", "watermark_sigio", 12)])
    [change] = pair(base, patched, catalogue)
    assert (change.outcome, change.qualifier) == ("regresses", "kernel splat: WARNING in perf_output_end")
    assert new_reports(base, patched) == ["WARNING in perf_init (outside every case, console line 3)"]
    assert new_reports(patched, patched) == []
    # each of two identical titles at boot counts: the base printing it once is not the patched kernel's twice
    twice = dataclasses.replace(patched, splats=[at("WARNING in perf_init", None, 3), at("WARNING in perf_init", None, 9)])
    once = dataclasses.replace(patched, splats=[at("WARNING in perf_init", None, 3)])
    assert new_reports(once, twice) == ["WARNING in perf_init (outside every case, console line 9)"]


def test_a_change_in_defining_evidence_is_reported_though_the_verdict_stays(catalogue: Catalogue) -> None:
    before = result("setsig_siginfo_watermark", D, si_code="1", si_band="0x41", records="4")
    after = result("setsig_siginfo_watermark", D, si_code="6", si_band="0x41", records="5")
    assert compare(before, after, catalogue) == ("regresses", ("si_code",), "")  # records are not defining: they may vary
    assert compare(before, before, catalogue) == ("no change", (), "")


def test_a_case_refused_on_both_kernels_could_not_be_tested_unless_refusing_is_right(catalogue: Catalogue) -> None:
    before = dataclasses.replace(result("watermark_sigio", Verdict.UNSUPPORTED), reason="perf_event_open: EACCES")
    outcome, _, how = compare(before, before, catalogue)
    assert (outcome, how) == ("could not test", "refused on both kernels (perf_event_open: EACCES), where delivered is known")
    refused = result("switch_support_cpu_wide", Verdict.UNSUPPORTED, "user-paranoid1")  # refusing is right there
    assert compare(refused, refused, catalogue)[0] == "no change"
    # held to what a kernel of the base's release does: attr.sigtrap is refused before 5.13, run on 6.12
    old = dataclasses.replace(result("sigtrap_thread", Verdict.UNSUPPORTED), reason="no attr.sigtrap")
    assert expectations.expected(catalogue, "sigtrap_thread", "5.10.0").verdict is Verdict.UNSUPPORTED
    assert compare(old, old, catalogue, "5.10.0")[0] == "no change"
    assert compare(old, old, catalogue, "6.12.0")[0] == "could not test"


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
    assert changes["exactly_once"].outcome == "could not test"  # the base never reported it: nothing to hold it to


def test_the_mutant_table_names_the_cases_and_scores(catalogue: Catalogue) -> None:
    caught = MutantResult(Path("01-a.patch"), [pair(outcome_of(result("watermark_sigio", D)),
                                                    outcome_of(result("watermark_sigio", N)), catalogue)[0]])
    survivor = MutantResult(Path("02-b.patch"), [])
    broken = MutantResult(Path("03-c.patch"), build_error="make failed")
    text = table([caught, survivor, broken])
    assert "| 01-a | watermark_sigio [root] regresses: delivered -> not-delivered | detected |" in text
    assert "| 02-b | none | survived |" in text and "| 03-c | make failed | build failed |" in text
    assert "Score: 1 of 3 mutants detected." in text
