"""KCIDB submissions read as their readers read them: kcidb-io's v5.3 schema (data/kcidb_v5_3.schema.json,
restated from kcidb-io with its formats: URIs by rfc3987, times as RFC 3339) and KernelCI's dashboard, whose
rules (kernelci/dashboard's backend, read at f37835978c23) are restated here:

- a test is a boot when its path is "boot" or starts "boot."; every other test is a test;
- a checkout is listed by (origin, tree_name, git_repository_url, git_repository_branch), newest start_time
  first, and one with no start_time cannot be listed; a tree's details and commit history are found by
  git_commit_hash (a checkout without one is listed, and opens on nothing); an issue is listed only through an
  incident reaching a checkout with a tree_name and a git_repository_branch;
- a build counts as PASS or FAIL by its status, anything else (none included) as inconclusive;
- an incident belongs to the issue of its (issue_id, issue_version); a failed test with none is uncategorized.
"""

from __future__ import annotations

import datetime
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

SCHEMA = json.loads((Path(__file__).parent / "data" / "kcidb_v5_3.schema.json").read_text())
FORMATS = jsonschema.FormatChecker(())  # only the formats kcidb-io checks: uri, email, date-time
if "uri" not in jsonschema.FormatChecker.checkers:
    raise ImportError("KCIDB's uri format needs rfc3987 (Debian's python3-rfc3987), as kcidb-io checks it")


def _rfc3339(value: object) -> bool:
    """RFC 3339: a date, 'T', a time and an offset (Z or +hh:mm)."""
    if not isinstance(value, str):
        return True
    parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed.tzinfo is not None and value[10] in "Tt"


FORMATS.checks("uri", raises=ValueError)(jsonschema.FormatChecker.checkers["uri"][0])
FORMATS.checks("email")(jsonschema.FormatChecker.checkers["email"][0])
FORMATS.checks("date-time", raises=ValueError)(_rfc3339)


def validate(submission: dict[str, Any]) -> None:
    """As kcidb-io validates a v5.3 submission (jsonschema's error when it breaks the schema), and each id once
    per kind (the database keeps one object per id: a second is merged into the first), and every link to an
    object this submission holds."""
    jsonschema.Draft7Validator(SCHEMA, format_checker=FORMATS).validate(submission)
    for kind in ("checkouts", "builds", "tests", "issues", "incidents"):
        ids = Counter(o["id"] for o in submission.get(kind, []))
        twice = [i for i, n in ids.items() if n > 1]
        if twice:
            raise AssertionError(f"{kind}: {len(twice)} ids given more than once, e.g. {twice[0]}")
    # and every link to an object of the same submission (the dashboard drops what links to nothing, silently)
    known = {kind: {o["id"] for o in submission.get(kind, [])} for kind in ("checkouts", "builds", "tests")}
    issues = {(i["id"], i["version"]) for i in submission.get("issues", [])}
    dangling = [b["id"] for b in submission.get("builds", []) if b["checkout_id"] not in known["checkouts"]]
    dangling += [t["id"] for t in submission.get("tests", []) if t["build_id"] not in known["builds"]]
    dangling += [i["id"] for i in submission.get("incidents", []) if (i["issue_id"], i["issue_version"]) not in issues
                 or ("test_id" in i and i["test_id"] not in known["tests"])
                 or ("build_id" in i and i["build_id"] not in known["builds"])]
    if dangling:
        raise AssertionError(f"{len(dangling)} objects link to nothing here, e.g. {dangling[0]}")


@dataclass
class Dashboard:
    """What the dashboard shows of one submission."""

    trees: dict[tuple[str, str | None, str | None, str | None], list[dict[str, Any]]] = field(default_factory=dict)
    unlisted: list[str] = field(default_factory=list)  # checkouts it cannot list: no start_time
    no_details: list[str] = field(default_factory=list)  # listed checkouts whose tree details it cannot open
    builds: Counter[str] = field(default_factory=Counter)  # PASS, FAIL, INCONCLUSIVE
    boots: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # build id -> its boots
    tests: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # build id -> its other tests
    issues: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # issue id -> its incidents
    listed_issues: set[str] = field(default_factory=set)
    uncategorized: list[dict[str, Any]] = field(default_factory=list)  # failed tests with no incident


def dashboard(submission: dict[str, Any]) -> Dashboard:
    view = Dashboard()
    checkouts = {c["id"]: c for c in submission.get("checkouts", [])}
    for c in checkouts.values():
        if "start_time" not in c:
            view.unlisted.append(c["id"])
            continue
        key = (c["origin"], c.get("tree_name"), c.get("git_repository_url"), c.get("git_repository_branch"))
        view.trees.setdefault(key, []).append(c)
        if "git_commit_hash" not in c:
            view.no_details.append(c["id"])
    builds = {b["id"]: b for b in submission.get("builds", []) if b["checkout_id"] in checkouts}
    view.builds = Counter(b.get("status") if b.get("status") in ("PASS", "FAIL") else "INCONCLUSIVE"
                          for b in builds.values())
    tests = {t["id"]: t for t in submission.get("tests", []) if t["build_id"] in builds}
    for t in tests.values():
        path = t.get("path")
        boot = path is not None and (path == "boot" or path.startswith("boot."))
        (view.boots if boot else view.tests).setdefault(t["build_id"], []).append(t)
    issues = {(i["id"], i["version"]): i for i in submission.get("issues", [])}
    linked: set[str] = set()
    for incident in submission.get("incidents", []):
        issue = issues.get((incident["issue_id"], incident["issue_version"]))
        if issue is None:
            continue
        view.issues.setdefault(issue["id"], []).append(incident)
        build_id = tests[incident["test_id"]]["build_id"] if incident.get("test_id") in tests else incident.get("build_id")
        checkout = checkouts.get(builds[build_id]["checkout_id"]) if build_id in builds else None
        if checkout is not None and checkout.get("tree_name") and checkout.get("git_repository_branch"):
            view.listed_issues.add(issue["id"])
        if "test_id" in incident:
            linked.add(incident["test_id"])
    view.uncategorized = [t for t in tests.values() if t.get("status") == "FAIL" and t["id"] not in linked]
    return view
