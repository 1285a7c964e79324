"""KCIDB, kernelci's common results database, schema v5.3, as KernelCI's
dashboards count: one checkout per kernel source version (Debian's linux source
package version; a commit for a kernel sigwake built from source; an image file;
the host), one build per image (status, config, the time it was built), and per
build a `boot` test, a test per privilege pass and case (path
`sigwake.<pass>.<case>`, its own console lines as its log excerpt) and a test per
kernel report (path `<case path>.splat`, or `boot.splat` outside every case,
titled as maintainers triage), and a test per upstream selftest test where they ran
beside the cases (path `peer.<program>.<test>`: its own result, PASS/FAIL/SKIP/ERROR,
and in misc the sigwake case it is compared with and whether they agree). Ids are `<origin>:...`, made from what identifies
each object, so a re-render gives the same ids. What `kcidb-submit` takes;
strictly inside the schema.

Status mapping (Outcome -> KCIDB):
  pass -> PASS     the behaviour of a kernel with every known fix
  xfail -> FAIL    the kernel is faulty as known (misc.known says where from)
  fail -> FAIL     a finding: a difference, a refusal, an intermittent case, a splat, a case a crash cut off
  skip -> SKIP     the kernel refused the setup: not applicable
  error -> ERROR   the reproducer failed
  miss -> MISS     never ran: the boot had ended before it
The boot test: PASS when the boot (or the host's run) finished, FAIL when the kernel crashed or hung, ERROR when
the target could not boot it at all."""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path
from typing import Any

from ..programs.catalogue import Catalogue
from ..parse.console import FRAME
from ..judge.judgement import Outcome, judged_cases, kernel_findings, untested
from ..judge.peers import PeerComparison, compare
from ..core.model import LOCAL, KernelResult, ReproResult, Splat
from ..store.store import console_log_path
from .report_input import Format, ReportInput

SCHEMA_VERSION = {"major": 5, "minor": 3}
STATUS = {Outcome.PASS: "PASS", Outcome.XFAIL: "FAIL", Outcome.FAIL: "FAIL", Outcome.SKIP: "SKIP",
          Outcome.ERROR: "ERROR", Outcome.MISS: "MISS"}
EXCERPT_MAX = 16384
KCIDB_ARCH = {"amd64": "x86_64", "arm64": "arm64"}  # Debian's architecture names, as the kernel's


def _token(text: str) -> str:
    """A piece of an id or a path: letters, digits, '_' and '-' only."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", text)


def built_at(version: str) -> str | None:
    """When the kernel was built, from its `uname -v`: Debian's ends in its changelog date "(2026-10-12)",
    a kernel built here in its build time "Mon Nov 30 16:40:00 UTC 2026"."""
    if (day := re.search(r"\((\d{4}-\d{2}-\d{2})\)\s*$", version)) is not None:
        return f"{day[1]}T00:00:00+00:00"
    if (stamp := re.search(r"\w{3} \w{3} +\d+ \d\d:\d\d:\d\d UTC \d{4}\s*$", version)) is not None:
        when = datetime.datetime.strptime(" ".join(stamp[0].split()), "%a %b %d %H:%M:%S UTC %Y")
        return when.replace(tzinfo=datetime.timezone.utc).isoformat()
    return None


def _checkout(kernel: KernelResult, origin: str) -> dict[str, Any]:
    o = kernel.origin
    misc: dict[str, Any] = {}
    if o.kind == "debian" and o.suite == LOCAL:  # a package file: its own bytes, whatever version it names
        key, tree, comment = f"deb:{o.sha256}", "local-package", f"a local package file {o.package} {o.version}, {o.path}"
        misc = {"source_version": o.version, "path": o.path}
    elif o.kind == "debian":  # every flavour of one source version is one checkout
        key, tree, comment = f"debian:linux={o.version}", f"debian/{o.suite}", f"Debian's linux {o.version} ({o.suite})"
        misc = {"source_version": o.version, "suite": o.suite}
    elif o.git_commit:
        key, tree, comment = f"git:{o.git_commit}", "source", f"a kernel tree at {o.git_commit[:12]}"
        misc = {"tree": o.git_tree}
    elif o.kind == "host":
        key, tree, comment = f"host:{kernel.release}", "host", f"the host's running kernel {kernel.release}"
    else:
        key, tree, comment = f"image:{o.sha256}", "image", f"an image file, {o.path}"
        misc = {"path": o.path}
    checkout: dict[str, Any] = {"id": f"{origin}:{_token(key)}", "origin": origin, "tree_name": tree,
                                "comment": comment, "valid": True}
    if o.git_commit and re.fullmatch(r"[0-9a-f]{40}", o.git_commit):
        checkout["git_commit_hash"] = o.git_commit
    if misc := {k: v for k, v in misc.items() if v is not None}:
        checkout["misc"] = misc
    return checkout


def _build(kernel: KernelResult, origin: str, checkout_id: str, build_key: str, log_url: str) -> dict[str, Any]:
    o = kernel.origin
    config = o.config or (f"debian {o.arch} {o.flavour}" if o.flavour else None)
    build: dict[str, Any] = {
        "id": f"{origin}:{build_key}", "origin": origin, "checkout_id": checkout_id, "status": "PASS",
        "architecture": KCIDB_ARCH.get(o.arch or "amd64", "x86_64"),
        "comment": f"{kernel.kernel_id}: release {kernel.release or 'unknown'}",
        "misc": {"kernel_id": kernel.kernel_id, "release": kernel.release or "", "boot": kernel.boot.status,
                 "console_log_url": log_url}}
    if config:
        build["config_name"] = config
    if start := o.built_at or built_at(kernel.kernel_version):
        build["start_time"] = start
    for key, value in (("flavour", o.flavour), ("lava_job_url", o.lava_job_url), ("uname_v", kernel.kernel_version)):
        if value:
            build["misc"][key] = value
    return build


def bounded(text: str) -> str:
    """A log excerpt as the schema takes it: no NUL, the last EXCERPT_MAX characters."""
    return text.replace("\0", "")[-EXCERPT_MAX:]


def unwrapped(lines: list[str]) -> str:
    """Console lines as a person reads them: each frame as its payload, kernel lines as printed."""
    return "\n".join(m["payload"] if (m := FRAME.search(line)) else line for line in lines)


def _case_excerpt(case: ReproResult, console: list[str]) -> str:
    if len(case.console_span) != 2:
        return ""
    first, last = case.console_span
    return bounded(unwrapped(console[first - 1:last]))


def _boot_test(kernel: KernelResult, origin: str, build: dict[str, Any], log_url: str) -> dict[str, Any]:
    own = kernel_findings(kernel)
    status = ("ERROR" if untested(kernel) is not None else "FAIL" if own or kernel.boot.status == "boot-failed"
              else "PASS")
    test: dict[str, Any] = {
        "id": f"{build['id']}:boot", "origin": origin, "build_id": build["id"], "path": "boot", "status": status,
        "start_time": kernel.recorded_at, "log_url": log_url, "comment": kernel.boot.detail or kernel.boot.status,
        "misc": {"boot": kernel.boot.status, "boots": kernel.boot.boots, "findings": [str(f) for f in own]}}
    if kernel.boot.seconds is not None:
        test["duration"] = kernel.boot.seconds
    if status != "PASS" and kernel.boot.console_tail:
        test["log_excerpt"] = bounded(kernel.boot.console_tail)
    return test


def _splat_test(kernel: KernelResult, splat: Splat, number: int, origin: str, build_id: str,
                log_url: str) -> dict[str, Any]:
    where = f"sigwake.{_token(splat.privilege)}.{_token(splat.case)}" if splat.case and splat.privilege else "boot"
    return {"id": f"{build_id}:splat{number}", "origin": origin, "build_id": build_id, "path": f"{where}.splat",
            "status": "FAIL", "comment": splat.title, "start_time": kernel.recorded_at, "log_url": log_url,
            "log_excerpt": bounded(splat.report),
            "misc": {"title": splat.title, "kind": splat.kind, "console_line": splat.console_line,
                     "fatal": splat.fatal, "cut": splat.cut, "tainted_before": splat.tainted_before,
                     "tainted_after": splat.tainted_after, "task": splat.task, "where": splat.where()}}


PEER_STATUS = {"pass": "PASS", "fail": "FAIL", "skip": "SKIP", "xfail": "FAIL", "error": "ERROR"}


def _peer_test(kernel: KernelResult, c: PeerComparison, origin: str, build_id: str, log_url: str) -> dict[str, Any]:
    path = f"peer.{_token(c.peer.program)}.{_token(c.peer.test)}"
    test: dict[str, Any] = {
        "id": f"{build_id}:{path}", "origin": origin, "build_id": build_id, "path": path,
        "status": "SKIP" if c.lacking else PEER_STATUS[c.peer.result], "start_time": kernel.recorded_at, "log_url": log_url,
        "misc": {"upstream": "tools/testing/selftests/perf_events", "result": c.peer.result, "agreement": c.word,
                 "console_line": c.peer.console_line}}
    if c.case is not None:
        test["misc"]["case"] = c.case
    if c.verdict is not None:
        test["misc"]["verdict"] = str(c.verdict)
    if c.peer.detail:
        test["comment"] = c.peer.detail[:1000]
    if c.finding is not None:
        test["misc"]["finding"] = c.finding
    return test


def render_kcidb(kernels: list[KernelResult], catalogue: Catalogue, results_dir: Path, origin: str = "sigwake",
                 log_base_url: str | None = None) -> dict[str, Any]:
    if not re.fullmatch(r"[a-z0-9_]+", origin):
        raise ValueError(f"KCIDB origin {origin!r}: lowercase letters, digits and '_' only")
    base = log_base_url.rstrip("/") if log_base_url else results_dir.resolve().as_uri()
    checkouts: dict[str, dict[str, Any]] = {}
    builds, tests = [], []
    for kernel in kernels:
        checkout = _checkout(kernel, origin)
        checkouts.setdefault(checkout["id"], checkout)
        build_key = kernel.origin.sha256 or _token(f"{kernel.kernel_id}-{kernel.release}")
        log = console_log_path(results_dir, kernel.kernel_id)
        log_url = f"{base}/{log.name}"
        build = _build(kernel, origin, checkout["id"], build_key, log_url)
        builds.append(build)
        tests.append(_boot_test(kernel, origin, build, log_url))
        console = log.read_text(errors="replace").replace("\r", "").split("\n") if log.exists() else []
        for privilege, cases in judged_cases(kernel, catalogue).items():
            for judged in cases:
                case = judged.case
                test: dict[str, Any] = {
                    "id": f"{build['id']}:{_token(privilege)}:{_token(case.name)}",
                    "origin": origin, "build_id": build["id"],
                    "path": f"sigwake.{_token(privilege)}.{_token(case.name)}",
                    "status": STATUS[judged.outcome], "start_time": kernel.recorded_at, "log_url": log_url,
                    "environment": {"comment": f"{kernel.runner.mode}, pass {privilege}",
                                    "misc": {"privilege": privilege,
                                             "perf_event_paranoid": kernel.paranoid.get(privilege, "")}},
                    "misc": {"verdict": str(case.verdict), "reason": case.reason, "evidence": case.evidence,
                             "runs": case.runs, "kernel_path": case.kernel_path, "outcome": str(judged.outcome)},
                }
                if case.duration_ms is not None:
                    test["duration"] = case.duration_ms / 1000
                if judged.outcome is Outcome.XFAIL:
                    test["misc"]["known"] = judged.why
                if judged.finding is not None:
                    test["misc"]["finding"] = judged.finding
                    test["misc"]["why"] = judged.why
                if excerpt := _case_excerpt(case, console):
                    test["log_excerpt"] = excerpt
                tests.append(test)
        tests += [_splat_test(kernel, splat, n, origin, build["id"], log_url)
                  for n, splat in enumerate(kernel.splats, start=1)]
        tests += [_peer_test(kernel, c, origin, build["id"], log_url) for c in compare(kernel, catalogue)]
    return {"version": SCHEMA_VERSION, "checkouts": list(checkouts.values()), "builds": builds, "tests": tests}


def _kcidb(given: ReportInput) -> dict[str, str]:
    submission = render_kcidb(given.kernels, given.catalogue, given.results_dir, given.options.kcidb_origin,
                              given.options.log_base_url)
    return {"kcidb/submission.json": json.dumps(submission, indent=2) + "\n"}


FORMAT = Format("kcidb", 5, _kcidb)
