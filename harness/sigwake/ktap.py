"""KTAP as sigwake's reproducers and guest init print it: one reproducer's
document (evidence as `# key=value`), and the guest's top level, which nests
each reproducer's document as an indented subtest."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .verdicts import Verdict

RESULT = re.compile(r"^(?P<ok>ok|not ok) (?P<number>\d+) (?P<name>[^#]*?)\s*(?:# (?P<directive>[A-Z]+)\s*(?P<why>.*))?$")
DIAGNOSTIC = re.compile(r"^# (?P<key>[A-Za-z0-9_.]+)=(?P<value>.*)$")
SUBTEST_INDENT = "    "


@dataclass(frozen=True)
class ResultLine:
    ok: bool
    number: int
    name: str
    directive: str | None
    why: str


def parse_result(line: str) -> ResultLine | None:
    match = RESULT.match(line)
    if not match:
        return None
    return ResultLine(match["ok"] == "ok", int(match["number"]), match["name"].strip(), match["directive"],
                      (match["why"] or "").strip())


@dataclass
class ReproDocument:
    """One reproducer's KTAP output, read."""

    name: str | None = None
    evidence: dict[str, str] = field(default_factory=dict)
    stated_verdict: str | None = None
    stated_reason: str = ""
    result: ResultLine | None = None
    problems: list[str] = field(default_factory=list)

    def decide(self) -> tuple[Verdict, str]:
        """The verdict the document states, if its result line agrees with it."""
        if self.problems:
            return Verdict.ERROR, "; ".join(self.problems)
        stated, reason = self.stated_verdict, self.stated_reason
        try:
            verdict = Verdict(stated) if stated else None
        except ValueError:
            return Verdict.ERROR, f"unknown verdict {stated!r}"
        if verdict is None or self.result is None:
            return Verdict.ERROR, "no verdict line" if verdict is None else "no result line"
        if self.result.ok != (verdict in (Verdict.DELIVERED, Verdict.UNSUPPORTED)):
            return Verdict.ERROR, f"result line ({'ok' if self.result.ok else 'not ok'}) contradicts verdict={verdict}"
        return verdict, reason


def parse_repro(lines: list[str]) -> ReproDocument:
    doc = ReproDocument()
    if not lines or lines[0] != "KTAP version 1":
        doc.problems.append("no KTAP header")
    for line in lines:
        if (diag := DIAGNOSTIC.match(line)) is not None:
            if diag["key"] == "verdict":
                doc.stated_verdict = diag["value"]
            elif diag["key"] == "reason":
                doc.stated_reason = diag["value"]
            else:
                doc.evidence[diag["key"]] = diag["value"]
        elif (result := parse_result(line)) is not None:
            if doc.result is not None:
                doc.problems.append("more than one result line")
            doc.result = result
            doc.name = result.name
    return doc


@dataclass
class GuestRun:
    """One reproducer as the guest init ran it."""

    name: str
    document: ReproDocument
    result: ResultLine | None = None
    duration_us: int | None = None

    def decide(self) -> tuple[Verdict, str]:
        if self.result is None:
            return Verdict.ERROR, "the guest never reported how this reproducer ended"
        if self.result.directive == "TIMEOUT":
            return Verdict.TIMEOUT, f"killed by the guest at its deadline: {self.result.why}"
        if self.result.directive == "ERROR" and self.document.result is None:
            return Verdict.ERROR, f"the reproducer died: {self.result.why}"
        return self.document.decide()


@dataclass
class GuestReport:
    release: str | None = None
    init_uptime_ms: int | None = None
    plan: int | None = None
    runs: list[GuestRun] = field(default_factory=list)
    done: bool = False


def parse_guest(payloads: list[str]) -> GuestReport:
    report = GuestReport()
    current: GuestRun | None = None
    sub: list[str] = []
    for line in payloads:
        if line.startswith(SUBTEST_INDENT):
            sub.append(line[len(SUBTEST_INDENT):])
            continue
        diag = DIAGNOSTIC.match(line)
        key, value = (diag["key"], diag["value"]) if diag else ("", "")
        if key == "sigwake.release":
            report.release = value
        elif key == "sigwake.init_uptime_ms":
            report.init_uptime_ms = int(value)
        elif key == "sigwake.start":
            current, sub = GuestRun(value, ReproDocument()), []
            report.runs.append(current)
        elif key == "sigwake.duration_us" and current is not None:
            current.duration_us = int(value)
        elif key == "sigwake.done":
            report.done = int(value) == len(report.runs) == report.plan
        elif line.startswith("1.."):
            report.plan = int(line[3:].split()[0])
        elif (result := parse_result(line)) is not None and current is not None:
            current.result = result
            current.document = parse_repro(sub) if sub else ReproDocument(problems=["printed nothing"])
            current = None
    return report
