"""What one program run says of its cases: the parser's document (ktap.py, which only reads) held against
how the program ended. The stated verdict must agree with its result line, the document must be whole, and the
exit must be the one the verdicts owe; anything else makes the cases errors, with why."""

from __future__ import annotations

from .ktap import CaseDocument, ProgramRun, ProgramDocument
from ..core.model import Evidence
from ..core.verdicts import Verdict, program_exit_code

CaseOutcome = tuple[str, Verdict, str, Evidence]  # case, verdict, reason, evidence


def stated(case: CaseDocument) -> tuple[Verdict, str]:
    """The verdict the case states, if its result line agrees with it."""
    said, reason = case.stated_verdict, case.stated_reason
    try:
        verdict = Verdict(said) if said else None
    except ValueError:
        return Verdict.ERROR, f"unknown verdict {said!r}"
    if verdict is None or case.result is None:
        return Verdict.ERROR, "no verdict line" if verdict is None else "no result line"
    if case.result.ok != verdict.is_ok:
        return Verdict.ERROR, f"result line ({'ok' if case.result.ok else 'not ok'}) contradicts verdict={verdict}"
    return verdict, reason


def case_verdicts(document: ProgramDocument) -> list[CaseOutcome]:
    """(case, verdict, reason, evidence) for every case; a flawed document makes each an error."""
    out = []
    for case in document.cases:
        verdict, reason = (Verdict.ERROR, "; ".join(document.problems)) if document.problems else stated(case)
        out.append((case.name, verdict, reason, case.evidence))
    return out


def judged(document: ProgramDocument, asked: str, ended: str, exit_code: int | None,
           one_case: bool = False) -> list[CaseOutcome]:
    """The cases' verdicts, held against how the program ended (`ended`: "exit 1", "killed by
    signal 9"; `exit_code` None when it did not exit). A program that reported no case is one
    error named `asked`; with `one_case` (it ran with --case `asked`) it must report that case
    alone; an exit the verdicts do not explain makes every case an error."""
    cases = case_verdicts(document)
    if one_case and cases and [c for c, _, _, _ in cases] != [asked]:
        reported = ", ".join(c for c, _, _, _ in cases)
        return [(asked, Verdict.ERROR, f"asked for case {asked}, the program reported {reported} ({ended})", {})]
    if not cases:
        why = "; ".join(document.problems) or "no case line"
        return [(asked, Verdict.ERROR, f"the program reported no case ({why}) and ended: {ended}", {"ended": ended})]
    if exit_code is None:
        return [(c, Verdict.ERROR, f"the program reported its cases, then ended: {ended}", {**e, "ended": ended})
                for c, _, _, e in cases]
    if document.problems:
        return [(c, v, f"{why} (ended: {ended})", e) for c, v, why, e in cases]
    owed = program_exit_code(v for _, v, _, _ in cases)
    if exit_code != owed:
        why = f"exit code {exit_code} contradicts the verdicts (they owe {owed})"
        return [(c, Verdict.ERROR, why, e) for c, _, _, e in cases]
    return cases


def outlived(cases: list[CaseOutcome], strays: int) -> list[CaseOutcome]:
    """A run that left processes running after it ended (the guest killed them: repro/guest/strays.h) could
    have had them act for it, against the cases after it or for its own verdict: its verdicts count for
    nothing, their evidence is kept."""
    if not strays:
        return cases
    return [(c, Verdict.ERROR, f"it left {strays} processes running after it ended (the guest killed them); "
             f"it said {v}", {**e, "strays": strays}) for c, v, _, e in cases]


def run_problem(run: ProgramRun) -> tuple[Verdict, str] | None:
    """What ended the program abnormally, if anything did."""
    if run.result is None:
        return Verdict.ERROR, "the guest never reported how this program ended"
    if run.result.name != run.name:  # a result for another run (or pass) is no result for this one
        return Verdict.ERROR, f"the result line names {run.result.name!r}, the run in progress was {run.name!r}"
    if run.result.directive == "TIMEOUT":
        return Verdict.TIMEOUT, f"killed by the guest at its deadline: {run.result.why}"
    return None
