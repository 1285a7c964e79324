"""The one judgement a gate reads, for every command: what was found (each finding with its kind) and what
could not be judged, in; the exit code and the last line out. run, qa and report take the findings of their
kernels (judgement.py), validate-patch those of its (base, patched) pairs (change.py), bisect those of its
steps; qa adds its bisections'. The command line only prints what comes out.

What could not be judged never passes: alone it is "could not test" (3); beside a finding the finding wins (1)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field

from ..core.exit_codes import exit_code
from ..core.model import KernelResult
from ..core.outcomes import FINDINGS as CHANGE_FINDINGS, UNJUDGED, CaseChange, Mark, Step
from ..programs.catalogue import Catalogue
from .judgement import FINDING_KINDS, Finding, findings, unjudged, untested

# A run's finding kinds that make a bisection step a finding, and what the step calls them, in the order a step
# is named by the first it has. A difference or a known failure is no problem of a step: one side of every
# bisection differs from what is known. A case cut off ("lost") names none of its own: the crash or hang that
# cut it does (judgement.kernel_findings).
STEP_PROBLEM_OF = {"crash": "crash", "hang": "hang", "intermittent": "split", "splat": "splat",
                   "refusal": "refusal", "error": "error"}
OTHER_VERDICT = "other verdict"  # a step's kernel verdict that is neither the old nor the new one
STEP_PROBLEMS = (*STEP_PROBLEM_OF.values(), OTHER_VERDICT)
# A bisection's own kinds: an answer that is not one commit, and its steps' problems.
BISECTION_KINDS = ("uncertain", *STEP_PROBLEMS)
# Every kind a gate counts, in the order its last line counts them.
KINDS = tuple(dict.fromkeys((*FINDING_KINDS, *CHANGE_FINDINGS, "report", *BISECTION_KINDS)))


@dataclass(frozen=True)
class Gate:
    findings: list[Finding] = field(default_factory=list)
    untested: list[str] = field(default_factory=list)  # each thing that could not be judged, and why

    @property
    def exit_code(self) -> int:
        return exit_code(len(self.findings), len(self.untested))

    def last_line(self) -> str:
        """'findings: 3 (1 crash, 2 lost); not tested: 1', or 'findings: none' only when nothing is either."""
        counts = Counter(f.kind for f in self.findings)
        kinds = ", ".join(f"{counts[k]} {k}" for k in KINDS if counts[k])
        line = f"findings: {len(self.findings)} ({kinds})" if self.findings else "findings: none"
        return line + (f"; not tested: {len(self.untested)}" if self.untested else "")

    def document(self) -> dict[str, object]:
        """What --json gives: the last line and what it counts."""
        return {"last_line": self.last_line(), "findings": [dataclasses.asdict(f) for f in self.findings],
                "not_tested": list(self.untested)}

    def __add__(self, other: Gate) -> Gate:
        return Gate([*self.findings, *other.findings], [*self.untested, *other.untested])


def of_changes(changes: list[CaseChange], new_reports: list[str], boot_problems: list[Finding] | None = None,
               kernel_id: str = "patched") -> Gate:
    """validate-patch: each case the patch regressed, changed or lost, each kernel report the patched kernel
    printed and the base did not (in a case or outside every case), a crash or hang of the patched kernel's
    boot the base did not show; each case the base could not judge."""
    found = [Finding(kernel_id, c.outcome, str(c)) for c in changes if c.outcome in CHANGE_FINDINGS]
    found += [Finding(kernel_id, "report", text) for text in new_reports] + list(boot_problems or [])
    return Gate(found, [str(c) for c in changes if c.outcome == UNJUDGED])


def of_run(kernels: list[KernelResult], catalogue: Catalogue, not_tested: list[str] | None = None) -> Gate:
    """run, qa and report: every finding of every kernel; each kernel that never got as far as a result
    (`not_tested`: could not be fetched or built) or that the target could not run, and each case of a tested
    kernel that the target left unjudged."""
    ordered = sorted(kernels, key=KernelResult.order)
    unrun = [f"{k.kernel_id}: {why}" for k in ordered if (why := untested(k)) is not None]
    cases = [case for k in ordered for case in unjudged(k, catalogue)]
    return Gate(findings(ordered, catalogue), [*unrun, *cases, *(not_tested or [])])


def unread(unreadable: list[str]) -> list[str]:
    """Stored files that could not be read, as what no one judged: a kernel may be missing from every report."""
    return [f"could not be read: {why}" for why in unreadable]


def of_steps(subject: str, first_changed: list[str], steps: list[Step]) -> Gate:
    """bisect: the answer is certain only when it names one candidate; every step whose kernel crashed, hung,
    split, splatted, refused, erred or showed a third verdict is a finding beside it, whatever it was marked."""
    found = [Finding(s.candidate, s.problem, f"{subject}: {s.note} (marked {s.mark.value})")
             for s in steps if s.problem]
    if len(first_changed) != 1:
        skipped = [s.candidate for s in steps if s.mark is Mark.SKIP]
        found.append(Finding(subject, "uncertain", f"the first changed is one of {', '.join(first_changed)}"
                             + (f" (skipped: {', '.join(skipped)})" if skipped else "")))
    return Gate(found)
