"""KTAP as sigwake's reproducers and guest init print it: one reproducer's
document (evidence as `# key=value`), and the guest's top level, which nests
each reproducer's document as an indented subtest."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import protocol
from .model import Evidence, evidence_value
from .verdicts import Verdict, program_exit_code

CaseOutcome = tuple[str, Verdict, str, Evidence]  # case, verdict, reason, evidence

RESULT = re.compile(r"^(?P<ok>ok|not ok) (?P<number>\d+) (?P<name>[^#]*?)\s*(?:# (?P<directive>[A-Z]+)\s*(?P<why>.*))?$")
DIAGNOSTIC = re.compile(r"^# (?P<key>[A-Za-z0-9_.]+)=(?P<value>.*)$")
SUBTEST_INDENT = "    "
KEY = protocol.REPORT  # the runner's report keys, as repro/protocol.json names them
KERNEL_PATH = KEY["kernel_path"]  # the guest's tracer: `# sigwake.kernel_path.<function>=<count>`


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
class CaseDocument:
    """One case of a reproducer's KTAP output: the diagnostics before its result line."""

    name: str
    evidence: Evidence = field(default_factory=dict)  # a whole number is a number
    stated_verdict: str | None = None
    stated_reason: str = ""
    result: ResultLine | None = None

    def decide(self) -> tuple[Verdict, str]:
        """The verdict the case states, if its result line agrees with it."""
        stated, reason = self.stated_verdict, self.stated_reason
        try:
            verdict = Verdict(stated) if stated else None
        except ValueError:
            return Verdict.ERROR, f"unknown verdict {stated!r}"
        if verdict is None or self.result is None:
            return Verdict.ERROR, "no verdict line" if verdict is None else "no result line"
        if self.result.ok != verdict.is_ok:
            return Verdict.ERROR, f"result line ({'ok' if self.result.ok else 'not ok'}) contradicts verdict={verdict}"
        return verdict, reason


@dataclass
class ProgramDocument:
    """A reproducer program's KTAP output: its cases, and what was wrong with the document."""

    cases: list[CaseDocument] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def verdicts(self) -> list[CaseOutcome]:
        """(case, verdict, reason, evidence) for every case; a flawed document makes each an error."""
        out = []
        for case in self.cases:
            verdict, reason = (Verdict.ERROR, "; ".join(self.problems)) if self.problems else case.decide()
            out.append((case.name, verdict, reason, case.evidence))
        return out

    def judged(self, asked: str, ended: str, exit_code: int | None, one_case: bool = False) -> list[CaseOutcome]:
        """The cases' verdicts, held against how the program ended (`ended`: "exit 1", "killed by
        signal 9"; `exit_code` None when it did not exit). A program that reported no case is one
        error named `asked`; with `one_case` (it ran with --case `asked`) it must report that case
        alone; an exit the verdicts do not explain makes every case an error."""
        cases = self.verdicts()
        if one_case and cases and [c for c, _, _, _ in cases] != [asked]:
            reported = ", ".join(c for c, _, _, _ in cases)
            return [(asked, Verdict.ERROR, f"asked for case {asked}, the program reported {reported} ({ended})", {})]
        if not cases:
            why = "; ".join(self.problems) or "no case line"
            return [(asked, Verdict.ERROR, f"the program reported no case ({why}) and ended: {ended}", {"ended": ended})]
        if exit_code is None:
            return [(c, Verdict.ERROR, f"the program reported its cases, then ended: {ended}", {**e, "ended": ended})
                    for c, _, _, e in cases]
        if self.problems:
            return [(c, v, f"{why} (ended: {ended})", e) for c, v, why, e in cases]
        owed = program_exit_code(v for _, v, _, _ in cases)
        if exit_code != owed:
            why = f"exit code {exit_code} contradicts the verdicts (they owe {owed})"
            return [(c, Verdict.ERROR, why, e) for c, _, _, e in cases]
        return cases


def parse_program(lines: list[str]) -> ProgramDocument:
    doc = ProgramDocument()
    if not lines or lines[0] != "KTAP version 1":
        doc.problems.append("no KTAP header")
    plan: int | None = None
    pending = CaseDocument("")
    for line in lines:
        if line.startswith("1..") and plan is None:
            plan = int(line[3:].split()[0]) if line[3:].split() and line[3:].split()[0].isdigit() else None
        elif (diag := DIAGNOSTIC.match(line)) is not None:
            if diag["key"] == "verdict":
                pending.stated_verdict = diag["value"]
            elif diag["key"] == "reason":
                pending.stated_reason = diag["value"]
            else:
                pending.evidence[diag["key"]] = evidence_value(diag["value"])
        elif (result := parse_result(line)) is not None:
            pending.name, pending.result = result.name, result
            doc.cases.append(pending)
            pending = CaseDocument("")
    if plan is None:
        doc.problems.append("no plan line")
    elif plan != len(doc.cases):
        doc.problems.append(f"planned {plan} cases, reported {len(doc.cases)}")
    if len({c.name for c in doc.cases}) != len(doc.cases):
        doc.problems.append("a case reported twice")
    return doc


@dataclass
class GuestRun:
    """One run of a reproducer program as the guest init ran it, in one privilege pass."""

    program: str
    privilege: str
    case: str | None = None  # the case asked for with --case; None: the whole program
    exit_code: int | None = None  # None: it did not exit (killed), or the guest did not say
    document: ProgramDocument = field(default_factory=ProgramDocument)
    result: ResultLine | None = None
    duration_us: int | None = None
    kernel_path: Evidence = field(default_factory=dict)  # function -> count, or why unavailable
    console_line: int = 0  # where its start frame and its result line stand in the console log (0: not known)
    console_end: int = 0
    tainted_before: str = ""  # /proc/sys/kernel/tainted as it started and as it ended ("": not said, or it
    # never ended: a crash cut it off)
    tainted_after: str = ""
    index: int = 1  # which run of its case in its pass (1 for the first)

    @property
    def name(self) -> str:
        """The name its result line must carry: "program.case [pass run k]" (the guest's case loop)."""
        return f"{self.program}{'.' + self.case if self.case else ''} [{self.privilege} run {self.index}]"

    def problem(self) -> tuple[Verdict, str] | None:
        """What ended the program abnormally, if anything did."""
        if self.result is None:
            return Verdict.ERROR, "the guest never reported how this program ended"
        if self.result.name != self.name:  # a result for another run (or pass) is no result for this one
            return Verdict.ERROR, f"the result line names {self.result.name!r}, the run in progress was {self.name!r}"
        if self.result.directive == "TIMEOUT":
            return Verdict.TIMEOUT, f"killed by the guest at its deadline: {self.result.why}"
        return None

    def ended(self) -> str:
        """How the program ended, in words."""
        if self.exit_code is not None:
            return f"exit {self.exit_code}"
        return self.result.why if self.result is not None and self.result.why else "no exit status"


@dataclass
class GuestReport:
    release: str | None = None
    version: str = ""  # uname -v: how and when the kernel was built
    init_uptime_ms: int | None = None
    plan: int | None = None
    runs: list[GuestRun] = field(default_factory=list)
    paranoid: dict[str, str] = field(default_factory=dict)  # privilege pass -> perf_event_paranoid
    warnings: list[str] = field(default_factory=list)  # what the guest init warned of (an unknown pass, ...)
    skipped: dict[str, str] = field(default_factory=dict)  # privilege pass -> why the target could not run it
    done: bool = False


def parse_guest(payloads: list[str], console_lines: list[int] | None = None) -> GuestReport:
    """`console_lines`: each payload's line in the console log, so that each run knows where it stands."""
    report = GuestReport()
    current: GuestRun | None = None
    privilege = "root"
    tainted = ""  # the last value the guest said
    started: dict[tuple[str, str, str | None], int] = {}  # runs begun per pass, program and case
    sub: list[str] = []
    for index, line in enumerate(payloads):
        if line.startswith(SUBTEST_INDENT):
            sub.append(line[len(SUBTEST_INDENT):])
            continue
        diag = DIAGNOSTIC.match(line)
        key, value = (diag["key"], diag["value"]) if diag else ("", "")
        if key == KEY["release"]:
            report.release = value
        elif key == KEY["version"]:
            report.version = value
        elif key == KEY["init_uptime_ms"]:
            report.init_uptime_ms = int(value)
        elif key == KEY["pass"]:
            privilege = value
        elif key == KEY["paranoid"]:
            report.paranoid[privilege] = value
        elif key == KEY["warning"]:
            report.warnings.append(value)
        elif key == KEY["skip"]:
            report.skipped[privilege] = value
        elif key == KEY["start"]:
            where = console_lines[index] if console_lines else 0
            current, sub = GuestRun(value, privilege, console_line=where, tainted_before=tainted,
                                    index=started.get((privilege, value, None), 0) + 1), []
            report.runs.append(current)
        elif key == KEY["tainted"]:
            tainted = value
            if current is not None:
                current.tainted_after = value
        elif key == KEY["case"] and current is not None:
            current.case = value
            current.index = started.get((current.privilege, current.program, value), 0) + 1
        elif key == KEY["exit"] and current is not None:
            current.exit_code = int(value)
        elif key == KEY["duration_us"] and current is not None:
            current.duration_us = int(value)
        elif key.startswith(KERNEL_PATH) and current is not None:
            current.kernel_path[key[len(KERNEL_PATH):]] = evidence_value(value)
        elif key == KEY["done"]:
            report.done = int(value) == len(report.runs) == report.plan
        elif line.startswith("1.."):
            report.plan = int(line[3:].split()[0])
        elif (result := parse_result(line)) is not None and current is not None:
            started[(current.privilege, current.program, current.case)] = current.index
            current.tainted_after = current.tainted_after or tainted  # unchanged by it (a run cut off has none)
            current.result = result
            current.console_end = console_lines[index] if console_lines else 0
            current.document = parse_program(sub) if sub else ProgramDocument(problems=["printed nothing"])
            current = None
    return report
