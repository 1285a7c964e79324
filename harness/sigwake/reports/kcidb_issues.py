"""KCIDB's issues and incidents: "a known bug, and the tests that show it", as the dashboard groups failures.

- A known kernel bug: the expectation a known failure (XFAIL) was judged by, one issue per fix (its commit, or
  the expectation's words where no commit is named), culprit the kernel's code; an incident for each test that
  failed as known. Its report_url is the fix in the stable tree, which holds mainline's commits and its own.
- A kernel report (a splat): one issue per title, as syzbot groups them; an incident on the test of the case it
  hit, or on the boot where it hit no case (on the build, for the host's, which has no boot test). Culprit the
  kernel's code, unless the report is known to follow the emulator (then the tool's, QEMU's TCG).
Every issue is version 1: re-rendering the same results gives the same issues."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from ..core.model import Runner, Splat
from ..judge.emulator_faults import emulators, said
from ..programs.catalogue import Expectation

VERSION = 1
FIX_URL = "https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux.git/commit/?id="
REPORT_MISC_MAX = 4096


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def known_bug(row: Expectation, origin: str) -> dict[str, Any]:
    """The issue of a known bug: a fix's commit, subject and words."""
    key = f"fix_{row.commit}" if row.commit else f"known_{_short_hash(row.source)}"
    issue: dict[str, Any] = {"id": f"{origin}:{key}", "version": VERSION, "origin": origin, "comment": row.source,
                             "culprit": {"code": True, "tool": False, "harness": False},
                             "misc": {"bug": str(row.before), "fixed": str(row.after)}}
    if row.commit:
        issue["report_url"] = FIX_URL + row.commit
        issue["misc"]["commit"] = row.commit
    if subject := re.search(r'"([^"]+)"', row.source):
        issue["report_subject"] = subject[1]
    if row.since is not None:
        issue["misc"]["since"] = f"v{row.since[0]}.{row.since[1]}"
    return issue


def splat_issue(splat: Splat, runner: Runner, origin: str) -> dict[str, Any]:
    fault = emulators(splat, runner)
    culprit = {"code": True, "tool": False, "harness": False} if fault is None else {"tool": True, "harness": False}
    issue: dict[str, Any] = {"id": f"{origin}:splat_{_short_hash(splat.title)}", "version": VERSION, "origin": origin,
                             "comment": said(splat, runner), "report_subject": splat.title, "culprit": culprit,
                             "misc": {"kind": splat.kind}}
    return issue


def incident(issue: dict[str, Any], incident_id: str, on: dict[str, str], comment: str,
             misc: dict[str, Any] | None = None) -> dict[str, Any]:
    """One occurrence of an issue, on a test (`on` {"test_id": ...}) or a build ({"build_id": ...})."""
    found: dict[str, Any] = {"id": incident_id, "origin": issue["origin"], "issue_id": issue["id"],
                             "issue_version": issue["version"], **on, "present": True, "comment": comment}
    if misc:
        found["misc"] = misc
    return found


def splat_misc(splat: Splat) -> dict[str, Any]:
    """What an incident keeps of the report itself: where it was and the first of its lines."""
    return {"title": splat.title, "kind": splat.kind, "console_line": splat.console_line, "fatal": splat.fatal,
            "cut": splat.cut, "tainted_before": splat.tainted_before, "tainted_after": splat.tainted_after,
            "task": splat.task, "report": splat.report[:REPORT_MISC_MAX]}
