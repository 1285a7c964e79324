"""What validate-patch and bisect found, as records kept beside the kernel results (results/validations/,
results/bisections/), so that a command's answer outlives its terminal: typed here, checked against their
JSON Schema by the store, rendered by the reports."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from .bisect import BisectReport, Step
from .validate import CaseChange, Validation
from .verdicts import Verdict


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


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
    schema: int = 1

    @property
    def name(self) -> str:
        return f"{self.recorded_at.replace(':', '')}-{self.patches[0] if self.patches else 'none'}"


def validation_record(validation: Validation, tree: str, patches: list[str], passes: list[str], repeat: int,
                      commit: str, last_line: str, exit_code: int) -> ValidationRecord:
    return ValidationRecord(now(), commit, tree, validation.base.tree_state, validation.patched.tree_state, patches,
                            passes, repeat, list(validation.changes), last_line, exit_code)


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
    schema: int = 1

    @property
    def name(self) -> str:
        return f"{self.recorded_at.replace(':', '')}-{self.subject.replace(':', '-')}"


def bisection_record(report: BisectReport, subject: str, over: str, commit: str, exit_code: int) -> BisectionRecord:
    return BisectionRecord(now(), commit, subject, over, report.old, report.new, list(report.first_changed),
                           report.last_old, report.confidence, list(report.steps), report.summary(subject), exit_code)
