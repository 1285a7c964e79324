"""What validate-patch and bisect found (a case's change between two kernels, a bisection's steps), as
records kept beside the kernel results (results/validations/, results/bisections/), so that a command's
answer outlives its terminal: typed here, checked against their JSON Schema by the store, rendered by the
reports."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field

from enum import Enum

from .model import ReproResult
from .verdicts import Verdict


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


OUTCOMES = ("fixes", "regresses", "changes", "no change", "could not test", "lost")
FINDINGS = ("regresses", "changes", "lost")  # what the patch did that a gate must stop on (exit 1)
UNJUDGED = "could not test"  # the base kernel gave no verdict to hold the patched one to: never a pass (exit 3)


@dataclass(frozen=True)
class CaseChange:
    case: str
    privilege: str
    outcome: str  # one of OUTCOMES
    before: ReproResult | None  # None: the case did not run on the base kernel
    after: ReproResult | None  # None: it did not run on the patched kernel
    differing: tuple[str, ...] = ()  # defining evidence keys whose values changed
    qualifier: str = ""  # "intermittent 2/5", "kernel splat: WARNING in ...": how the outcome came about

    @property
    def is_finding(self) -> bool:
        return self.outcome in FINDINGS

    def __str__(self) -> str:
        def shown(r: ReproResult | None) -> str:
            if r is None:
                return "missing"
            keys = ("records", "pollin", "signals", *self.differing)
            evidence = " ".join(f"{k}={r.evidence[k]}" for k in dict.fromkeys(keys) if k in r.evidence)
            return f"{r.verdict} ({evidence})" if evidence else f"{r.verdict}: {r.reason}" if r.reason else str(r.verdict)
        what = f" ({', '.join(self.differing)} changed)" if self.differing else ""
        how = f" ({self.qualifier})" if self.qualifier else ""
        # How many runs each side had: an adaptive --agree stops a case whose first runs agree.
        counts = [sum(r.runs.values()) if r is not None else 0 for r in (self.before, self.after)]
        runs = " [runs {} -> {}]".format(*counts) if any(counts) else ""
        return (f"{self.case} [{self.privilege}]: {self.outcome}{how}{what}: {shown(self.before)} -> "
                f"{shown(self.after)}{runs}")


class Mark(str, Enum):
    OLD = "old"
    NEW = "new"
    SKIP = "skip"


@dataclass(frozen=True)
class Step:
    candidate: str
    verdict: Verdict | None  # None: not judged (the note says why)
    note: str
    mark: Mark
    problem: str = ""  # a finding of the step whatever its mark (gate.STEP_PROBLEMS), "" when none


@dataclass(frozen=True)
class ValidationRecord:
    recorded_at: str
    sigwake_commit: str
    tree: str
    base: str  # the base tree's state (commit, and -dirty)
    patched: str
    patches: list[str]
    passes: list[str]
    repeat: int
    changes: list[CaseChange]  # every case, with its results on both kernels
    last_line: str  # "findings: none", or the findings counted
    exit_code: int
    reports: list[str] = field(default_factory=list)  # kernel reports the patched kernel printed and the base did not
    schema: int = 3  # 3: a case carries when its run started (kernel-result schema 11)

    @property
    def name(self) -> str:
        return f"{self.recorded_at.replace(':', '')}-{self.patches[0] if self.patches else 'none'}"


@dataclass(frozen=True)
class BisectionRecord:
    recorded_at: str
    sigwake_commit: str
    subject: str  # the case bisected (PROGRAM:CASE)
    over: str  # what was bisected: Debian's packages of a flavour, or a tree between two commits
    old: Verdict
    new: Verdict
    first_changed: list[str]  # one candidate, or the range it could not narrow
    last_old: str
    confidence: float
    steps: list[Step]
    summary: str
    exit_code: int
    schema: int = 2

    @property
    def name(self) -> str:
        return f"{self.recorded_at.replace(':', '')}-{self.subject.replace(':', '-')}"
