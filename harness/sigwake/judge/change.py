"""How a case differs between two kernels: validate-patch's outcome for one case (fixes, regresses, changes,
no change, could not test, lost), with the defining evidence that changed, and QA's neighbouring packages whose
headline verdicts differ. Judged against the behaviour of a kernel with every known fix (the cases' facts)."""

from __future__ import annotations

from . import expectations
from ..programs.catalogue import Catalogue
from .judgement import split_words
from ..core.model import LOST_IN_TRANSPORT, QaLine, QaStep, ReproResult
from ..core.outcomes import UNJUDGED
from ..core.verdicts import Verdict

KERNEL_VERDICTS = {str(v) for v in Verdict if v.is_kernel_verdict}


def differing_evidence(before: ReproResult, after: ReproResult, catalogue: Catalogue) -> tuple[str, ...]:
    """The evidence the case's facts call defining (which signal, why, the counts a kernel bug can change while
    the verdict word stays), compared where both sides report it."""
    return tuple(k for k in catalogue.defining(before.name)
                 if k in before.evidence and k in after.evidence and before.evidence[k] != after.evidence[k])


def always_wrong(case: ReproResult, correct: Verdict | None) -> bool:
    """Every run a kernel verdict other than the correct one (a split of wrong verdicts included)."""
    if correct is None:
        return False
    if case.verdict is Verdict.FLAKY:
        return bool(case.runs) and all(v != str(correct) and v in KERNEL_VERDICTS for v in case.runs)
    return case.verdict.is_kernel_verdict and case.verdict is not correct


def compare(before: ReproResult, after: ReproResult, catalogue: Catalogue,
            release: str = "") -> tuple[str, tuple[str, ...], str]:
    """The outcome for one case, the defining evidence that changed, and how ("intermittent k/n": the
    patched kernel's runs split, k of n not the correct verdict). "fixes" and "regresses" are judged
    against the behaviour of a kernel with every known fix (the cases' facts). A base that gave no verdict
    (an error, a timeout, a failed boot, runs that split) could not test the case, unless the patched
    kernel is wrong in every run where the base was right in some; nor could two kernels that both refused a
    case a kernel of the base's `release` runs (no release: a kernel with every fix)."""
    correct = expectations.correct(catalogue, before.name, before.privilege)
    if after.verdict is Verdict.ERROR and after.reason.startswith(LOST_IN_TRANSPORT):
        return UNJUDGED, (), f"the patched kernel: {after.reason}"  # the target's loss, no word of the patch
    if before.verdict is Verdict.FLAKY:
        base = split_words(before, correct)
        if str(correct) in before.runs and after.verdict in (Verdict.ERROR, Verdict.TIMEOUT, Verdict.BOOT_FAILED):
            return "lost", (), f"the base split ({base}), right in some runs"
        if always_wrong(after, correct) and str(correct) in before.runs:
            return "regresses", (), f"the base split ({base}); wrong in every run after"
        return UNJUDGED, (), f"the base split ({base})"  # right after in n runs is no proof that a split is gone
    if not before.verdict.is_kernel_verdict:
        return UNJUDGED, (), f"the base: {before.verdict}" + (f": {before.reason}" if before.reason else "")
    known = expectations.expected(catalogue, before.name, release, before.privilege, "file") if release else None
    runs = known.verdict if known is not None else correct  # what a kernel of the base's release does
    if before.verdict is after.verdict is Verdict.UNSUPPORTED and runs not in (None, Verdict.UNSUPPORTED):
        # Refused on both where a kernel of that release runs it: nothing past the refusal was exercised.
        return UNJUDGED, (), f"refused on both kernels ({before.reason or 'unsupported'}), where {runs} is known"
    if after.verdict is Verdict.FLAKY:
        # The patched kernel shows another behaviour in some runs: never a pass.
        return ("regresses" if before.verdict is correct else "changes"), (), split_words(after, correct)
    if after.verdict in (Verdict.ERROR, Verdict.TIMEOUT, Verdict.BOOT_FAILED):
        # The same programs reached a verdict on the base kernel: what stops them now is the patch
        # (a syscall it makes fail, a signal they never expected, a kernel that hangs or dies).
        return "lost", (), ""
    differing = differing_evidence(before, after, catalogue)
    if before.verdict is after.verdict and not differing:
        return "no change", (), ""
    if correct is not None and after.verdict is correct and before.verdict is not correct:
        return "fixes", differing, ""
    if correct is not None and before.verdict is correct:
        return "regresses", differing, ""
    return "changes", differing, ""


def verdict_changes(line: QaLine) -> list[tuple[QaStep, QaStep]]:
    """Neighbouring steps whose verdicts differ, where both are kernel verdicts (a failed boot says
    nothing about the kernel's behaviour)."""
    judged = [s for s in line.steps if s.verdict in KERNEL_VERDICTS]
    return [(a, b) for a, b in zip(judged, judged[1:]) if a.verdict != b.verdict]
