"""validate-patch's comparison: what a patch did to each case, judged against the
behaviour of a kernel with every known fix, from the verdict and the evidence
that defines the case; and the mutant score's table."""

from __future__ import annotations

from pathlib import Path

import pytest

from sigwake import expectations
from sigwake.guest import GuestOutcome
from sigwake.mutants import MutantResult, table
from sigwake.model import BootRecord, ReproResult
from sigwake.validate import compare, pair
from sigwake.verdicts import Verdict

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
def test_verdict_changes(case: str, before: Verdict, after: Verdict, outcome: str) -> None:
    assert compare(result(case, before), result(case, after)) == (outcome, ())


def test_a_change_in_defining_evidence_is_reported_though_the_verdict_stays() -> None:
    before = result("setsig_siginfo_watermark", D, si_code="1", si_band="0x41", records="4")
    after = result("setsig_siginfo_watermark", D, si_code="6", si_band="0x41", records="5")
    assert compare(before, after) == ("regresses", ("si_code",))  # records are not defining: they may vary
    assert compare(before, before) == ("no change", ())


def test_unprivileged_passes_are_judged_by_their_own_expectations() -> None:
    refused = result("switch_support_cpu_wide", Verdict.UNSUPPORTED, "user-paranoid1")
    opened = result("switch_support_cpu_wide", D, "user-paranoid1")
    assert expectations.correct("switch_support_cpu_wide", "user-paranoid1") is Verdict.UNSUPPORTED
    assert compare(refused, opened)[0] == "regresses"


def outcome(*results: ReproResult) -> GuestOutcome:
    return GuestOutcome("6.12.0", BootRecord("ok"), list(results), {})


def test_a_case_that_dies_or_vanishes_after_the_patch_is_reported() -> None:
    died = ReproResult("watermark_sigio", Verdict.ERROR, "the program reported no case and ended: killed by signal 29",
                       {"ended": "killed by signal 29"}, None, "root", {"error": 3})
    changes = {c.case: c for c in pair(outcome(result("watermark_sigio", D), result("watermark_poll", D)),
                                       outcome(died, result("exactly_once", D)))}
    assert changes["watermark_sigio"].outcome == "lost" and "killed by signal 29" in str(changes["watermark_sigio"])
    assert changes["watermark_poll"].outcome == "lost" and changes["watermark_poll"].after is None
    assert changes["exactly_once"].outcome == "appeared"


def test_the_mutant_table_names_the_cases_and_scores() -> None:
    caught = MutantResult(Path("01-a.patch"), [pair(outcome(result("watermark_sigio", D)),
                                                    outcome(result("watermark_sigio", N)))[0]])
    survivor = MutantResult(Path("02-b.patch"), [])
    broken = MutantResult(Path("03-c.patch"), build_error="make failed")
    text = table([caught, survivor, broken])
    assert "| 01-a | watermark_sigio [root] regresses: delivered -> not-delivered | detected |" in text
    assert "| 02-b | none | survived |" in text and "| 03-c | make failed | build failed |" in text
    assert "Score: 1 of 3 mutants detected." in text
