"""KCIDB, kernelci's common results database, schema v5.3, as KernelCI's dashboard
reads it: a checkout per kernel source and a build per image (kcidb_sources.py),
per build a `boot` test (for the host's running kernel, which nothing booted, `sigwake.run`),
a test per privilege pass and case (path `sigwake.<pass>.<case>`), the upstream
selftests under kselftest's own paths (`kselftest.perf_events.<program>.<test>`:
their own result, and in misc the case they are compared with and whether they
agree), and the issues and incidents of kcidb_issues.py: each known bug with the
tests that fail as known or lack its fix, each kernel report with the test it hit
(and the cases lost to a crash), each selftest finding and each flavour difference
on its test. A pass the kernel refused whole is one SKIP test at
`sigwake.<pass>.refused-whole` (refused_passes.py). A test's log_excerpt is its own
console lines (a crashed boot's from the report's first line; head and tail where
longer than the schema takes), its start_time its own run's where the target gave a
clock (a native run's own clock; a guest's, the boot's start plus the kernel log's
clock; a selftest's, its program's), else none. log_url is the console log's under
--log-base-url (without it, none: a file:// URL means nothing to a dashboard; misc
names the file). Ids are `<origin>:...`, made from what identifies each object, so
a re-render gives the same ids. What `kcidb-submit` takes; strictly inside the
schema.

Status mapping (Outcome -> KCIDB):
  pass -> PASS     the behaviour of a kernel with every known fix
  xfail -> FAIL    the kernel is faulty as known: an incident of the known bug's issue
  fail -> FAIL     a finding: a difference, a refusal, an intermittent case, a splat, a case a crash cut off
  skip -> SKIP     the kernel refused the setup: not applicable
  error -> ERROR   the reproducer failed
  miss -> MISS     never ran: the boot had ended before it
The boot test: PASS when the boot finished, FAIL when the kernel crashed or hung, ERROR when the target could
not boot it at all."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..core.clock import on_kernel_clock
from ..core.model import KernelResult, ReproResult, Splat
from ..judge import expectations
from ..judge.flavours import flavour_findings
from ..judge.judgement import BOOT_ENDINGS, Judged, Outcome, kernel_findings, splats_of, untested, whole_run
from ..judge.refused_passes import RefusedPass, shown_passes
from ..judge.peers import PeerComparison, compare
from ..parse.console import FRAME
from ..programs.catalogue import Catalogue
from ..store.store import console_log_path
from . import kcidb_issues, kcidb_sources
from .kcidb_sources import KCIDB_ARCH, token
from .report_input import Format, ReportInput

SCHEMA_VERSION = {"major": 5, "minor": 3}
STATUS = {Outcome.PASS: "PASS", Outcome.XFAIL: "FAIL", Outcome.FAIL: "FAIL", Outcome.SKIP: "SKIP",
          Outcome.ERROR: "ERROR", Outcome.MISS: "MISS"}
PEER_STATUS = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP", "xfail": "PASS", "error": "ERROR"}  # xfail: kselftest's ok
EXCERPT_MAX = 16384
KSELFTEST = "kselftest.perf_events"  # tools/testing/selftests/perf_events, as KernelCI names its collection


def bounded(text: str) -> str:
    """A log excerpt as the schema takes it: no NUL; where longer than EXCERPT_MAX, its head and its tail (a
    report's first lines say what it is, its last how it ended), and how much was left out between them."""
    text = text.replace("\0", "")
    if len(text) <= EXCERPT_MAX:
        return text
    room = EXCERPT_MAX - 64  # the note's room
    keep = room // 2
    note = f"\n[... {len(text) - 2 * keep} characters left out ...]\n"
    return text[:keep] + note + text[len(text) - keep:]


def unwrapped(lines: list[str]) -> str:
    """Console lines as a person reads them: each frame as its payload, kernel lines as printed."""
    return "\n".join(m["payload"] if (m := FRAME.search(line)) else line for line in lines)


def platform(kernel: KernelResult) -> str:
    """What ran the cases, as the dashboard's hardware views group tests (environment.misc.platform)."""
    arch = KCIDB_ARCH.get(kernel.origin.arch or "amd64", "x86_64")
    if kernel.runner.mode == "qemu":
        return f"qemu-{arch}" + (f"-{kernel.runner.accel}" if kernel.runner.accel else "")
    if kernel.runner.mode == "lava":
        return token(kernel.runner.machine or "lava")
    return f"host-{arch}"


def _environment(kernel: KernelResult, privilege: str) -> dict[str, Any]:
    where = ("this host, natively: no boot" if kernel.runner.mode == "native" else
             f"{kernel.runner.machine or kernel.runner.mode}, {kernel.runner.cpus or '?'} CPUs")
    return {"comment": f"{where}; pass {privilege}",
            "misc": {"platform": platform(kernel), "privilege": privilege,
                     "perf_event_paranoid": kernel.paranoid.get(privilege, "")}}


def _boot_excerpt(kernel: KernelResult, console: list[str], status: str) -> str:
    """A crashed boot from its fatal report's first line; a boot that ended otherwise badly its console's tail;
    a good one the kernel's log up to the first framed line (the host's run, which prints none: what ran)."""
    fatal = next((s for s in kernel.splats if s.fatal), None)
    if status != "PASS" and fatal is not None and console:
        return unwrapped(console[fatal.console_line - 1:])
    if status != "PASS":
        return kernel.boot.console_tail or ""
    first_frame = next((n for n, line in enumerate(console) if FRAME.search(line)), len(console))
    booted = "\n".join(console[:first_frame])
    return booted or f"the host's own kernel ran the cases natively (sigwake-run), {kernel.boot.seconds or 0:.1f} s"


def _boot_test(kernel: KernelResult, origin: str, build: dict[str, Any], links: dict[str, str],
               console: list[str]) -> dict[str, Any]:
    ended = [f for f in kernel_findings(kernel) if f.kind in BOOT_ENDINGS]  # reports: sigwake.kernel_log
    status = "ERROR" if untested(kernel) is not None else "FAIL" if ended else "PASS"
    name = whole_run(kernel)  # the host's run is no boot: a test the dashboard does not count as one
    test: dict[str, Any] = {
        "id": f"{build['id']}:{name}", "origin": origin, "build_id": build["id"],
        "path": name if name == "boot" else f"sigwake.{name}", "status": status,
        **links, "comment": kernel.boot.detail or kernel.boot.status,
        "environment": _environment(kernel, "boot"),
        "misc": {"boot": kernel.boot.status, "boots": kernel.boot.boots, "findings": [str(f) for f in ended]}}
    test["start_time"] = kernel.started()  # the boot's start, else when the run was recorded less its length
    if kernel.boot.seconds is not None:
        test["duration"] = kernel.boot.seconds
    if excerpt := _boot_excerpt(kernel, console, status):
        test["log_excerpt"] = bounded(excerpt)
    return test


def _kernel_log_test(kernel: KernelResult, outside: list[Splat], origin: str, build_id: str,
                     links: dict[str, str]) -> dict[str, Any]:
    """The kernel's reports no case test holds (during the boot, between cases, during a selftest, in a program
    that reported no case), as a test of their own: a FAIL the dashboard counts as a test, not a second boot.
    It starts when the kernel printed the first of them, where its one boot and its log give a clock."""
    test: dict[str, Any] = {
        "id": f"{build_id}:kernel_log", "origin": origin, "build_id": build_id, "path": "sigwake.kernel_log",
        "status": "FAIL", **links,
        "comment": f"{len(outside)} kernel report{'s' if len(outside) > 1 else ''} outside every case",
        "log_excerpt": bounded("\n\n".join(s.report for s in outside)), "environment": _environment(kernel, "kernel"),
        "misc": {"reports": [f"{s.title} ({s.where()})" for s in outside]}}
    stamps = [s.printk_s for s in outside if s.printk_s is not None]
    # the first report's: the boot's start plus the kernel log's clock; with fresh boots after a crash, a report's
    # clock may be a later boot's, whose start is not kept
    if kernel.boot.started_at and stamps and kernel.boot.boots == 1:
        test["start_time"] = on_kernel_clock(kernel.boot.started_at, min(stamps))
    return test


CUT_HERE = "[ cut here ]"  # the line a WARNING or BUG prints above its first


def _case_excerpt(case: ReproResult, splats: list[Splat], console: list[str]) -> str:
    """The case's own console lines; where the kernel reported while it ran, from the report's first line (its
    "cut here" line where it printed one); a report printed after the run's last line (a printk thread's, on
    rt) follows the run's lines."""
    if len(case.console_span) != 2:
        return "\n\n".join(s.report for s in splats)
    first, last = case.console_span
    inside = [s.console_line for s in splats if first <= s.console_line <= last]
    if inside:
        first = min(inside)
        first -= 1 if first >= 2 and CUT_HERE in console[first - 2] else 0
    later = [s.report for s in splats if s.console_line > last]
    return bounded("\n\n".join([unwrapped(console[first - 1:last]), *later]))


def _case_test(judged: Judged, origin: str, build_id: str, links: dict[str, str], console: list[str]) -> dict[str, Any]:
    case, kernel = judged.case, judged.kernel
    path = f"sigwake.{token(case.privilege)}.{token(case.name)}"
    test: dict[str, Any] = {
        "id": f"{build_id}:{token(case.privilege)}:{token(case.name)}", "origin": origin, "build_id": build_id,
        "path": path, "status": STATUS[judged.outcome], **links,
        "environment": _environment(kernel, case.privilege),
        "misc": {"verdict": str(case.verdict), "reason": case.reason, "evidence": case.evidence, "runs": case.runs,
                 "kernel_path": case.kernel_path, "outcome": str(judged.outcome)}}
    if case.started_at:
        test["start_time"] = case.started_at
    if case.duration_ms is not None:
        test["duration"] = case.duration_ms / 1000
    if judged.outcome is Outcome.XFAIL:
        test["misc"]["known"] = judged.why
    if judged.finding is not None:
        test["misc"]["finding"] = judged.finding
        test["misc"]["why"] = judged.why
    # a case with no console lines of its own (it never ran: the boot had ended) says why
    if excerpt := _case_excerpt(case, splats_of(kernel, case), console) or bounded(judged.why or case.reason):
        test["log_excerpt"] = excerpt
    return test


def _refused_test(kernel: KernelResult, refused: RefusedPass, others: list[Judged], origin: str, build_id: str,
                  links: dict[str, str]) -> dict[str, Any]:
    name = f"{token(refused.privilege)}.refused-whole"
    test: dict[str, Any] = {
        "id": f"{build_id}:{name}", "origin": origin, "build_id": build_id, "path": f"sigwake.{name}",
        "status": "SKIP", **links, "comment": refused.short(), "log_excerpt": bounded(refused.line()),
        "environment": _environment(kernel, refused.privilege),
        "misc": {"why": refused.why, "skipped": len(refused.skipped), "cases": refused.total,
                 "names": refused.names()}}
    starts = [j.case.started_at for j in (*refused.skipped, *others) if j.case.started_at]
    if starts:  # the pass's: its first run's start, and the time the pass took
        test["start_time"] = min(starts)
        if (seconds := kernel.boot.pass_seconds.get(refused.privilege)) is not None:
            test["duration"] = seconds
    return test


def _peer_test(kernel: KernelResult, c: PeerComparison, origin: str, build_id: str, links: dict[str, str],
               console: list[str]) -> dict[str, Any]:
    path = ".".join([KSELFTEST, token(c.peer.program), *(token(part) for part in c.peer.test.split("."))])
    test: dict[str, Any] = {
        "id": f"{build_id}:{path}", "origin": origin, "build_id": build_id, "path": path,
        "status": PEER_STATUS[c.peer.result], **links,
        "environment": _environment(kernel, "peer"),
        "misc": {"upstream": "tools/testing/selftests/perf_events", "result": c.peer.result, "agreement": c.word,
                 "console_line": c.peer.console_line}}
    for name, value in (("case", c.case), ("verdict", c.verdict and str(c.verdict)), ("finding", c.finding)):
        if value is not None:
            test["misc"][name] = value
    if c.peer.started_at:  # its program's start: kselftest gives a test no clock of its own
        test["start_time"] = c.peer.started_at
    if c.peer.detail:
        test["comment"] = c.peer.detail[:1000]
    said = [c.peer.detail, unwrapped(console[c.peer.console_line - 1:c.peer.console_line])
            if 0 < c.peer.console_line <= len(console) else ""]
    if excerpt := "\n".join(s for s in said if s):
        test["log_excerpt"] = bounded(excerpt)
    return test


def render_kcidb(kernels: list[KernelResult], catalogue: Catalogue, results_dir: Path, origin: str = "sigwake",
                 log_base_url: str | None = None) -> dict[str, Any]:
    if not re.fullmatch(r"[a-z0-9_]+", origin):
        raise ValueError(f"KCIDB origin {origin!r}: lowercase letters, digits and '_' only")
    base = log_base_url.rstrip("/") if log_base_url else None
    checkouts: dict[str, dict[str, Any]] = {}
    issues: dict[str, dict[str, Any]] = {}
    builds, tests, incidents = [], [], []
    flavours = flavour_findings(kernels)
    for kernel in kernels:
        checkout = kcidb_sources.checkout(kernel, origin)
        if (seen := checkouts.setdefault(checkout["id"], checkout)) is not checkout:
            seen["start_time"] = min(seen["start_time"], checkout["start_time"])  # its kernels' earliest run
        log = console_log_path(results_dir, kernel.kernel_id)
        links = {"log_url": f"{base}/{log.name}"} if base else {}  # a file:// URL is nothing to a dashboard
        build = kcidb_sources.build(kernel, origin, checkout["id"], log.name, links)
        builds.append(build)
        console = log.read_text(errors="replace").replace("\r", "").split("\n") if log.exists() else []
        boot = _boot_test(kernel, origin, build, links, console)
        tests.append(boot)
        by_case: dict[tuple[str, str], str] = {}
        for shown in shown_passes(kernel, catalogue):
            if shown.refused is not None:
                refused = _refused_test(kernel, shown.refused, shown.cases, origin, build["id"], links)
                tests.append(refused)
                by_case.update({(j.case.privilege, j.name): refused["id"] for j in shown.refused.skipped})
            for judged in shown.cases:
                test = _case_test(judged, origin, build["id"], links, console)
                tests.append(test)
                by_case[(judged.case.privilege, judged.name)] = test["id"]
                incidents += _case_incidents(judged, test["id"], catalogue, origin, issues)
        outside = [s for s in kernel.splats if (s.privilege or "", s.case or "") not in by_case]
        kernel_log = _kernel_log_test(kernel, outside, origin, build["id"], links) if outside else None
        tests += [kernel_log] if kernel_log else []
        for n, splat in enumerate(kernel.splats, start=1):
            issue = issues.setdefault(*_keyed(kcidb_issues.splat_issue(splat, kernel.runner, origin)))
            hit = by_case.get((splat.privilege or "", splat.case or ""))
            on = [hit or (kernel_log or {}).get("id")]  # the case it hit, else the reports no case holds
            if splat.fatal:  # and the boot (or the host's run) it ended
                on.append(boot["id"])
            incidents += [kcidb_issues.incident(issue, f"{test_id}:splat{n}", {"test_id": test_id}, splat.where(),
                                                kcidb_issues.splat_misc(splat)) for test_id in on if test_id]
        for c in compare(kernel, catalogue):
            test = _peer_test(kernel, c, origin, build["id"], links, console)
            tests.append(test)
            if c.lacking:  # not comparable here: the machine's, an issue of the tool that ran it
                issue = issues.setdefault(*_keyed(kcidb_issues.machine_lacks(c.lacking, origin)))
                incidents.append(kcidb_issues.incident(issue, f"{test['id']}:lacking", {"test_id": test["id"]},
                                                       c.word))
            elif c.finding is not None:  # it disagrees with its case, or never finished: a finding
                issue = issues.setdefault(*_keyed(kcidb_issues.peer_finding(c.peer.program, c.peer.test, origin)))
                incidents.append(kcidb_issues.incident(issue, f"{test['id']}:finding", {"test_id": test["id"]},
                                                       c.finding))
        for f in flavours:  # a case this flavour judges otherwise than its generic kernel does
            if f.kernel_id == kernel.kernel_id and (hit := by_case.get((f.privilege, f.case))) is not None:
                issue = issues.setdefault(*_keyed(kcidb_issues.flavour_difference(f.privilege, f.case, origin)))
                incidents.append(kcidb_issues.incident(issue, f"{hit}:flavour", {"test_id": hit}, str(f)))
    return {"version": SCHEMA_VERSION, "checkouts": list(checkouts.values()), "builds": builds, "tests": tests,
            "issues": list(issues.values()), "incidents": incidents}


def _case_incidents(judged: Judged, test_id: str, catalogue: Catalogue, origin: str,
                    issues: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The issues a case's test shows: the known bug its expectation names, whether it failed as known or
    differs from it (present unless the kernel behaves as one with the fix), and for a case a crash lost, the
    report that ended the boot."""
    kernel, case = judged.kernel, judged.case
    found = []
    row = expectations.applying(catalogue, judged.name, case.privilege, kernel.origin.kind)
    if row is not None and row.before is not row.after and (present := _bug_present(judged, catalogue)) is not None:
        issue = issues.setdefault(*_keyed(kcidb_issues.known_bug(row, origin)))
        known = kcidb_issues.incident(issue, f"{test_id}:known", {"test_id": test_id}, judged.why)
        found.append(dict(known, present=present))
    # a case a crash lost: the last boot's, whose end its reason names (an earlier boot's was carried on from)
    fatal = [s for s in kernel.splats if s.fatal]
    if judged.finding == "lost" and fatal and "Kernel panic" in judged.why:
        issue = issues.setdefault(*_keyed(kcidb_issues.splat_issue(fatal[-1], kernel.runner, origin)))
        found.append(kcidb_issues.incident(issue, f"{test_id}:lost", {"test_id": test_id}, judged.why))
    return found


def _bug_present(judged: Judged, catalogue: Catalogue) -> bool | None:
    """Whether a case shows its known bug: yes where it failed as known, or lacks the fix (a missing fix, a
    regression); no where it has the fix where none was known (an unexpected fix); None for anything else (a
    third verdict, a pass, a finding of another kind)."""
    if judged.outcome is Outcome.XFAIL:
        return True
    if judged.finding != "difference":
        return None
    kernel = judged.kernel
    release = expectations.facts_release(kernel.release or "", kernel.kernel_version)
    mismatch = expectations.check(catalogue, "", release, judged.name, judged.case.verdict, {},
                                  judged.case.privilege, kernel.origin.kind)
    return None if mismatch is None else {"missing fix": True, "regression": True, "unexpected fix": False}.get(
        mismatch.kind)


def _keyed(issue: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return issue["id"], issue


def _kcidb(given: ReportInput) -> dict[str, str]:
    submission = render_kcidb(given.kernels, given.catalogue, given.results_dir, given.options.kcidb_origin,
                              given.options.log_base_url)
    return {"kcidb/submission.json": json.dumps(submission, indent=2) + "\n"}


FORMAT = Format("kcidb", 5, _kcidb)
