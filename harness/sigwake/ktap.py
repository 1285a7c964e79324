"""KTAP as sigwake's reproducers and guest init print it: one reproducer's
document (evidence as `# key=value`), and the guest's top level, which nests
each reproducer's document as an indented subtest. It only reads: what a
document's lines say of its cases is outcome.py's to decide."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import protocol
from .model import Evidence, evidence_value

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


@dataclass
class ProgramDocument:
    """A reproducer program's KTAP output: its cases, and what was wrong with the document."""

    cases: list[CaseDocument] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


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
