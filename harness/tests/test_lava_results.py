"""The table of what a LAVA lab shows for each run (judge/lava_results.py; the guest looks it up in
repro/guest/lava_table.cc, tested there): the judgement's outcome of each verdict, per release at which
what is known changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from sigwake.core.verdicts import Verdict
from sigwake.judge import expectations
from sigwake.judge.judgement import Outcome, judge
from sigwake.judge.lava_results import ANY_CASE, RESULT, lava_table, releases
from sigwake.programs.catalogue import Catalogue
from sigwake.core.model import KernelResult
from sigwake.store.store import load_results

RESULTS = Path(__file__).resolve().parents[2] / "results"
PASSES = ("root", "user-paranoid1", "user-paranoid2", "user-paranoid3")


def rows_for(table: str, release: tuple[int, int]) -> dict[tuple[str, str], dict[str, str]]:
    """What the table says for a kernel of `release`: each pass and case's row of the greatest release not above
    it (as the guest reads it)."""
    chosen: dict[tuple[str, str], tuple[tuple[int, int], dict[str, str]]] = {}
    for line in table.splitlines():
        at, privilege, name, *words = line.split()
        version = tuple(int(part) for part in at.split("."))
        if version <= release and ((privilege, name) not in chosen or chosen[(privilege, name)][0] <= version):
            chosen[(privilege, name)] = (version, dict(word.split(":") for word in words))  # type: ignore[assignment]
    return {key: words for key, (_, words) in chosen.items()}


def test_a_right_not_delivered_is_a_pass_before_the_fix_and_a_failure_after(catalogue: Catalogue) -> None:
    table = lava_table(catalogue, PASSES, "debian")
    before = rows_for(table, (6, 1))[("root", "watermark_sigio.watermark_sigio")]
    after = rows_for(table, (6, 10))[("root", "watermark_sigio.watermark_sigio")]
    assert before.get("not-delivered") == "pass" and "delivered" not in before  # delivered there: an unexpected fix
    assert after.get("delivered") == "pass" and "not-delivered" not in after
    assert (6, 10) in releases(catalogue)


def test_debians_refusal_at_paranoid_3_is_known_and_nothing_else_passes_there(catalogue: Catalogue) -> None:
    debian = rows_for(lava_table(catalogue, PASSES, "debian"), (6, 12))
    perf = {c.name for c in catalogue.cases.values() if c.opens_perf_events}
    paranoid3 = {case: words for (privilege, case), words in debian.items() if privilege == "user-paranoid3"}
    # what is known of Debian's kernels there, for every case that opens perf events (and a program the
    # catalogue does not know): a pass
    assert all(words == {"unsupported": "pass"} for case, words in paranoid3.items()
               if "." not in case or case.split(".", 1)[1] in perf)
    # a case that opens none (a socket's urgent data) is held to its own facts there
    assert paranoid3["urgent_sigurg.urgent_sigurg_pgrp"].get("delivered") == "pass"
    assert "unsupported" not in paranoid3["urgent_sigurg.urgent_sigurg_pgrp"]
    upstream = rows_for(lava_table(catalogue, PASSES, "file"), (6, 12))
    assert upstream[("user-paranoid3", "watermark_poll.watermark_poll")].get("delivered") == "pass"


def test_a_program_the_catalogue_does_not_know_is_held_to_what_is_known_of_every_case(catalogue: Catalogue) -> None:
    words = rows_for(lava_table(catalogue, ("root",), "file"), (6, 1))[("root", ANY_CASE)]
    assert words == {"delivered": "pass", "measured": "pass", "unsupported": "skip"}  # not ok with nothing known: fail


def test_errors_never_pass(catalogue: Catalogue) -> None:
    for words in rows_for(lava_table(catalogue, PASSES, "debian"), (7, 2)).values():
        assert str(Verdict.ERROR) not in words


@pytest.mark.parametrize("kernel", load_results(RESULTS).results, ids=lambda k: k.kernel_id)
def test_the_table_says_what_the_judgement_said_of_each_recorded_kernel(kernel: KernelResult,
                                                                         catalogue: Catalogue) -> None:
    release = tuple(int(p) for p in (kernel.release or "0.0").split("-")[0].split(".")[:2])
    table = rows_for(lava_table(catalogue, tuple(kernel.paranoid) or PASSES, kernel.origin.kind,  # type: ignore[arg-type]
                                kernel.runner.cpus), release)
    compared = 0
    for case in kernel.reproducers:
        facts = catalogue.facts(case.name)
        if facts is None or not case.verdict.is_kernel_verdict or any(s.case == case.name for s in kernel.splats):
            continue  # a split, lost or splatted case: its runs are not one verdict the table answers
        judged = judge(kernel, case, catalogue)
        words = table[(case.privilege, f"{facts.program}.{facts.name}")]
        known = expectations.expected(catalogue, case.name, kernel.release or "", case.privilege, kernel.origin.kind)
        want = "pass" if judged.outcome is Outcome.SKIP and known and known.verdict is case.verdict else \
            RESULT.get(judged.outcome, "fail")
        assert words.get(str(case.verdict), "fail") == want, (case.name, case.privilege)
        compared += 1
    assert compared or kernel.boot.status != "ok"
