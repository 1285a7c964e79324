"""The one KTAP reader (Documentation/dev-tools/ktap.rst): a generic recursive
parser with line numbers (read), and what sigwake reads from it: one
reproducer's document (evidence as `# key=value`), and the guest's top level,
which nests each reproducer's document as an indented subtest, with the runner's
`# sigwake.*` keys that repro/protocol.json declares. It only reads: what a
document's lines say of its cases is outcome.py's to decide."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..core import protocol
from ..core.model import Evidence, evidence_value

RESULT = re.compile(r"^(?P<ok>ok|not ok) (?P<number>\d+) (?P<name>[^#]*?)\s*(?:# (?P<directive>[A-Z]+)\s*(?P<why>.*))?$")
DIAGNOSTIC = re.compile(r"^# (?P<key>[A-Za-z0-9_.]+)=(?P<value>.*)$")
PLAN = re.compile(r"^1\.\.(?P<count>\d+)")
VERSION = "KTAP version 1"
SUBTEST_INDENT = "    "
DIRECTIVES = {"SKIP", "TODO", "XFAIL", "TIMEOUT", "ERROR"}  # ktap.rst's directives
KEY = protocol.REPORT  # the runner's report keys, as repro/protocol.json names them
KERNEL_PATH = KEY["kernel_path"]  # the guest's tracer: `# sigwake.kernel_path.<function>=<count>`
MACHINE = KEY["machine"]  # what the selftests need of the machine: `# sigwake.machine.<name>=yes: ...|no: ...`


@dataclass(frozen=True)
class ResultLine:
    ok: bool
    number: int
    name: str
    directive: str | None
    why: str
    line: int = 0  # where it stands in what was read (1-based; 0: not known)


def parse_result(line: str, where: int = 0) -> ResultLine | None:
    match = RESULT.match(line)
    if not match:
        return None
    return ResultLine(match["ok"] == "ok", int(match["number"]), match["name"].strip(), match["directive"],
                      (match["why"] or "").strip(), where)


@dataclass(frozen=True)
class Diagnostic:
    line: int
    text: str  # after "# "
    key: str | None = None  # for "# key=value"
    value: str = ""


@dataclass(frozen=True)
class Problem:
    line: int  # 0: of the whole document
    text: str

    def __str__(self) -> str:
        return f"{self.text} (line {self.line})" if self.line else self.text


@dataclass
class Test:
    """Everything at one level from after the previous result line up to this one: the diagnostics in
    order, the indented subtest document if any, and the result line (None: the input ended first)."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    subtest: Document | None = None
    result: ResultLine | None = None


@dataclass
class Document:
    first_line: int = 1
    version_line: int | None = None
    plan: int | None = None
    plan_line: int = 0
    tests: list[Test] = field(default_factory=list)  # the last has no result when the input was cut off
    problems: list[Problem] = field(default_factory=list)  # what breaks ktap.rst, with where

    def all_problems(self) -> list[str]:
        """This document's problems and every subtest's, each saying where."""
        found = [str(p) for p in self.problems]
        for test in self.tests:
            if test.subtest is not None:
                name = test.result.name if test.result else "an unfinished subtest"
                found += [f"in {name}: {p}" for p in test.subtest.all_problems()]
        return found


def read(lines: list[str], first_line: int = 1) -> Document:
    """A KTAP document and its subtests (indented four spaces), every item with its line number."""
    return read_numbered(list(enumerate(lines, start=first_line)))


def read_numbered(numbered: list[tuple[int, str]]) -> Document:
    doc = Document(numbered[0][0] if numbered else 1)
    current = Test()
    sub: list[tuple[int, str]] = []  # this test's indented lines: its subtest document
    names: set[str] = set()

    def close(test: Test) -> None:
        if sub:
            test.subtest = read_numbered(sub)
            sub.clear()

    for where, line in numbered:
        if line.startswith(SUBTEST_INDENT):
            sub.append((where, line[len(SUBTEST_INDENT):]))
        elif line == VERSION:
            if doc.version_line is None:
                doc.version_line = where
        elif (plan := PLAN.match(line)) is not None:
            if doc.plan is not None or doc.tests:
                doc.problems.append(Problem(where, "a plan after the plan or after results"))
            if doc.plan is None:
                doc.plan, doc.plan_line = int(plan["count"]), where
        elif line.startswith("#"):
            diag = DIAGNOSTIC.match(line)
            current.diagnostics.append(Diagnostic(where, line[2:] if line.startswith("# ") else line[1:],
                                                  diag["key"] if diag else None, diag["value"] if diag else ""))
        elif (result := parse_result(line, where)) is not None:
            if doc.plan is None:
                doc.problems.append(Problem(where, "a result before the plan"))
            if result.number != len(doc.tests) + 1:
                doc.problems.append(Problem(where, f"result {result.number} where {len(doc.tests) + 1} was next"))
            if result.directive is not None and result.directive not in DIRECTIVES:
                doc.problems.append(Problem(where, f"unknown directive {result.directive}"))
            if result.name in names:
                doc.problems.append(Problem(where, f"{result.name} reported twice"))
            names.add(result.name)
            close(current)
            current.result = result
            doc.tests.append(current)
            current = Test()
        elif line.strip():
            doc.problems.append(Problem(where, f"neither a result, a plan nor a diagnostic: {line!r}"))
    close(current)
    if current.diagnostics or current.subtest is not None:
        doc.tests.append(current)
        if current.subtest is not None:
            doc.problems.append(Problem(current.subtest.first_line, "a subtest with no result line after it"))
    if doc.version_line != doc.first_line:
        doc.problems.insert(0, Problem(doc.first_line, f"the first line is not '{VERSION}'"))
    finished = sum(t.result is not None for t in doc.tests)
    if doc.plan is not None and doc.plan != finished:
        doc.problems.append(Problem(doc.plan_line, f"planned {doc.plan}, reported {finished}"))
    return doc


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
    return program_of(read(lines), 1)


def program_of(doc: Document, first_line: int) -> ProgramDocument:
    """A reproducer's document: each finished test a case, its `# key=value` diagnostics its evidence
    (`verdict` and `reason` what it says it decided). Its problems are those that leave its cases in doubt."""
    program = ProgramDocument()
    if doc.version_line != first_line:
        program.problems.append(str(Problem(first_line, "no KTAP header")))
    for test in doc.tests:
        if test.result is None:
            continue
        case = CaseDocument(test.result.name, result=test.result)
        for diag in test.diagnostics:
            if diag.key == "verdict":
                case.stated_verdict = diag.value
            elif diag.key == "reason":
                case.stated_reason = diag.value
            elif diag.key is not None:
                case.evidence[diag.key] = evidence_value(diag.value)
        program.cases.append(case)
    if doc.plan is None:
        program.problems.append("no plan line")
    elif doc.plan != len(program.cases):
        program.problems.append(str(Problem(doc.plan_line, f"planned {doc.plan} cases, reported {len(program.cases)}")))
    if len({c.name for c in program.cases}) != len(program.cases):
        twice = next(c for i, c in enumerate(program.cases) if c.name in {d.name for d in program.cases[:i]})
        program.problems.append(str(Problem(twice.result.line if twice.result else 0, "a case reported twice")))
    return program


@dataclass
class ProgramRun:
    """One run of a reproducer program as the guest init ran it, in one privilege pass."""

    program: str
    privilege: str
    case: str | None = None  # the case asked for with --case; None: the whole program
    exit_code: int | None = None  # None: it did not exit (killed), or the guest did not say
    document: ProgramDocument = field(default_factory=ProgramDocument)
    result: ResultLine | None = None
    duration_us: int | None = None
    cpu_us: int | None = None  # the CPU time its processes took; the rest of duration_us they waited
    kernel_path: Evidence = field(default_factory=dict)  # function -> count, or why unavailable
    console_line: int = 0  # where its start frame and its result line stand in the console log (0: not known)
    console_end: int = 0
    tainted_before: str = ""  # /proc/sys/kernel/tainted as it started and as it ended ("": not said, or it
    # never ended: a crash cut it off)
    tainted_after: str = ""
    strays: int = 0  # processes it left running after it ended, which the guest killed
    printk_start: float | None = None  # its start and end on the kernel log's clock (None: not said)
    printk_end: float | None = None
    clock_start: float | None = None  # its start on the machine's clock, seconds since the epoch (a native run's)
    index: int = 1  # which run of its case in its pass (1 for the first)
    left_out: int = 0  # runs of its case left out after it because the first ones agreed (adaptive repeats)

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
class PeerRun:
    """One upstream selftest program as the guest ran it after the cases: its kselftest TAP, nested."""

    name: str  # its file's name, as the init names it ("peer-watermark_signal")
    document: Document | None = None
    result: ResultLine | None = None
    exit_code: int | None = None
    duration_us: int | None = None
    cpu_us: int | None = None
    console_line: int = 0
    printk_start: float | None = None  # its start and end on the kernel log's clock (None: not said)
    printk_end: float | None = None
    clock_start: float | None = None  # its start on the machine's clock, seconds since the epoch (a native run's)

    @property
    def program(self) -> str:
        """The selftest's own name ("watermark_signal")."""
        return self.name.removeprefix("peer-")


@dataclass
class RunnerReport:
    release: str | None = None
    version: str = ""  # uname -v: how and when the kernel was built
    init_uptime_ms: int | None = None
    plan: int | None = None
    runs: list[ProgramRun] = field(default_factory=list)
    paranoid: dict[str, str] = field(default_factory=dict)  # privilege pass -> perf_event_paranoid
    warnings: list[str] = field(default_factory=list)  # what the guest init warned of (an unknown pass, ...)
    skipped: dict[str, str] = field(default_factory=dict)  # privilege pass -> why the target could not run it
    peers: list[PeerRun] = field(default_factory=list)
    machine: dict[str, str] = field(default_factory=dict)  # capability -> "yes: ..." or "no: ..." (before peers)
    # (seconds, text): console lines the kernel printed as the later lines of one of its records (a newline in a
    # string a process chose), which never start a report (repro/guest/printk_clock.h)
    continued: list[tuple[str, str]] = field(default_factory=list)
    done: bool = False

    def last_started(self) -> str:
        """The run in progress last, as the init's sigwake.resume names it ("" before any)."""
        if self.peers:
            return f"peer/{self.peers[-1].name}/"
        if self.runs:
            run = self.runs[-1]
            return f"{run.privilege}/{run.program}/{run.case or ''}"
        return ""


def kmsg_unescaped(text: str) -> str:
    """/dev/kmsg's text as the console shows it: its \\xNN escapes (a byte below ' ', from 127, and '\\') undone,
    the bytes read as the console log is (UTF-8, an undecodable byte replaced), without carriage returns (the
    report reader drops them)."""
    raw = re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m[1], 16)]), text.encode("ascii", "replace"))
    return raw.decode("utf-8", "replace").replace("\r", "")


def parse_runner(payloads: list[str], console_lines: list[int] | None = None) -> RunnerReport:
    """`console_lines`: each payload's line in the console log, so that each run, each case and each problem
    knows where it stands there. Each top-level test of the document is one run: the runner's keys before it,
    its program's document nested."""
    report = RunnerReport()
    numbered = console_lines if console_lines and len(console_lines) == len(payloads) else None
    doc = read_numbered(list(zip(numbered, payloads)) if numbered else list(enumerate(payloads, start=1)))
    report.plan = doc.plan

    def console_line(where: int) -> int:
        return where if numbered else 0

    privilege = "root"
    tainted = ""  # the last value the guest said
    started: dict[tuple[str, str, str | None], int] = {}  # runs begun per pass, program and case
    for test in doc.tests:
        current: ProgramRun | None = None
        peer: PeerRun | None = None
        for diag in test.diagnostics:
            key, value = diag.key or "", diag.value
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
                if current is not None:  # a run whose result line was lost: the next one still counts after it
                    started[(current.privilege, current.program, current.case)] = current.index
                current = ProgramRun(value, privilege, console_line=console_line(diag.line), tainted_before=tainted,
                                   index=started.get((privilege, value, None), 0) + 1)
                report.runs.append(current)
            elif key == KEY["tainted"]:
                tainted = value
                if current is not None:
                    current.tainted_after = value
            elif key == KEY["case"] and current is not None:
                current.case = value
                current.index = started.get((current.privilege, current.program, value), 0) + 1
            elif key == KEY["peer"]:
                peer = PeerRun(value, console_line=console_line(diag.line))
                report.peers.append(peer)
            elif key == KEY["exit"] and (current or peer) is not None:
                (current or peer).exit_code = int(value)
            elif key == KEY["duration_us"] and (current or peer) is not None:
                (current or peer).duration_us = int(value)
            elif key == KEY["cpu_us"] and (current or peer) is not None:
                (current or peer).cpu_us = int(value)
            elif key == KEY["strays"] and current is not None:
                current.strays = int(value)
            elif key == KEY["printk_start"] and (current or peer) is not None:
                (current or peer).printk_start = float(value)
            elif key == KEY["clock_start"] and (current or peer) is not None:
                (current or peer).clock_start = float(value)
            elif key == KEY["printk_end"] and (current or peer) is not None:
                (current or peer).printk_end = float(value)
            elif key == KEY["printk_continued"]:
                seconds, _, text = value.partition(" ")
                report.continued.append((seconds, kmsg_unescaped(text)))
            elif key.startswith(MACHINE):
                report.machine[key[len(MACHINE):]] = value
            elif key.startswith(KERNEL_PATH) and current is not None:
                current.kernel_path[key[len(KERNEL_PATH):]] = evidence_value(value)
            elif key == KEY["unneeded"] and report.runs:  # in place of one more run of the last case
                report.runs[-1].left_out += 1
            elif key == KEY["done"]:
                ran = len(report.runs) + sum(r.left_out for r in report.runs) + len(report.peers)
                report.done = int(value) == ran == report.plan
        if peer is not None:
            peer.document, peer.result = test.subtest, test.result
        if test.result is not None and current is not None:
            started[(current.privilege, current.program, current.case)] = current.index
            current.tainted_after = current.tainted_after or tainted  # unchanged by it (a run cut off has none)
            current.result = test.result
            current.console_end = console_line(test.result.line)
            current.document = (program_of(test.subtest, test.subtest.first_line) if test.subtest is not None
                                 else ProgramDocument(problems=["printed nothing"]))
    return report
