"""KCIDB's issues and incidents: "a known bug, and the tests that show it", as the dashboard groups failures.

- A known kernel bug: the expectation a known failure (XFAIL) was judged by, one issue per fix (its commit and
  the subject quoted after it, or the expectation's words where no commit is named), culprit the kernel's code;
  an incident for each test that failed as known. Its report_url is the commit in the stable tree, which holds
  mainline's commits and its own (the expectation says where the commit is known from).
- A kernel report (a splat): one issue per title, as syzbot groups them (and per culprit: the kernel's code, or
  the tool's where the report is known to follow the emulator, QEMU's TCG); an incident on the test of the case
  it hit, or on sigwake.kernel_log where it hit none, and on the boot it ended.
- A known bug's fix a kernel lacks (a "missing fix" or a regression) is an incident of that bug's issue too; a fix
  a kernel has where it was not known is one with present false. A case a crash lost is an incident of the
  report that ended the boot.
- An upstream selftest this machine cannot run as meant: an issue of the tool, an incident on its test. One that
  disagrees with its case, or never finished: an issue of its own, no culprit named.
- A case a flavour judges otherwise than its generic kernel: an issue per case, an incident on the flavour's test.
Every issue is version 1 and made from its id's facts alone: re-rendering gives the same issues."""

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
    """The issue of a known bug, from the fix alone (its commit and subject), so every expectation that names
    the fix gives the same issue; each incident says the expectation it was judged by."""
    key = f"fix_{row.commit}" if row.commit else f"known_{_short_hash(row.source)}"
    subject = re.search(rf'{re.escape(row.commit)}\s+"([^"]+)"', row.source) if row.commit else None
    fix = (f'{row.commit} "{subject[1]}"' if subject else row.commit) if row.commit else row.source
    issue: dict[str, Any] = {"id": f"{origin}:{key}", "version": VERSION, "origin": origin,
                             "comment": f"known bug, fixed by {fix}" if row.commit else f"known bug: {fix}",
                             "culprit": {"code": True, "tool": False, "harness": False}}
    if row.commit:
        issue["report_url"] = FIX_URL + row.commit
        issue["misc"] = {"commit": row.commit}
    if subject:
        issue["report_subject"] = subject[1]
    return issue


def splat_issue(splat: Splat, runner: Runner, origin: str) -> dict[str, Any]:
    """One issue per title and culprit: a report known to follow the emulator is the tool's, apart from the same
    title printed where it does not."""
    fault = emulators(splat, runner)
    culprit = {"code": True, "tool": False, "harness": False} if fault is None else {"tool": True, "harness": False}
    key = f"splat_{_short_hash(splat.title)}" + ("" if fault is None else "_emulator")
    return {"id": f"{origin}:{key}", "version": VERSION, "origin": origin, "comment": said(splat, runner),
            "report_subject": splat.title, "culprit": culprit, "misc": {"kind": splat.kind}}


def machine_lacks(lacking: str, origin: str) -> dict[str, Any]:
    """An upstream selftest this machine cannot run as meant (no breakpoints, no PMU): the tool's, not the code's."""
    return {"id": f"{origin}:machine_{_short_hash(lacking)}", "version": VERSION, "origin": origin,
            "comment": f"not comparable here: this machine lacks {lacking}",
            "culprit": {"code": False, "tool": True, "harness": False}}


def peer_finding(program: str, test: str, origin: str) -> dict[str, Any]:
    """An upstream selftest that disagrees with the case it is held to, or never finished: which of the two is
    right is for a reader to say, so no culprit is named."""
    return {"id": f"{origin}:peer_{_short_hash(f'{program}.{test}')}", "version": VERSION, "origin": origin,
            "comment": f"the upstream selftest {program}: {test} and its sigwake case disagree, or it did not finish"}


def flavour_difference(privilege: str, case: str, origin: str) -> dict[str, Any]:
    """A case a kernel flavour (cloud, rt, 16k) judges otherwise than the generic kernel of its version."""
    return {"id": f"{origin}:flavour_{_short_hash(f'{privilege}.{case}')}", "version": VERSION, "origin": origin,
            "comment": f"a flavour judges {case} ({privilege}) otherwise than the generic kernel of its version"}


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
