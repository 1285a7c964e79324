"""KCIDB, kernelci's common results database, schema v5.3: one checkout per kernel
source (a Debian package version, an image file, the host), one build per image,
one test per kernel, pass and case with path `sigwake.<case>`. Ids are
`<origin>:...`, made from what identifies each object, so a re-render gives the
same ids. What `kcidb-submit` takes; strictly inside the schema.

Status mapping (Outcome -> KCIDB):
  pass -> PASS     the behaviour of a kernel with every known fix
  xfail -> FAIL    the kernel is faulty as known (misc.known says where from)
  fail -> FAIL     a difference from what is known (misc.difference)
  skip -> SKIP     the kernel refused the setup: not applicable
  error -> ERROR   the reproducer failed, or its runs disagreed
  miss -> MISS     the harness could not run it (boot failed or timed out)"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .judgement import Outcome, judged_cases
from .model import KernelResult
from .store import console_log_path

SCHEMA_VERSION = {"major": 5, "minor": 3}
STATUS = {Outcome.PASS: "PASS", Outcome.XFAIL: "FAIL", Outcome.FAIL: "FAIL", Outcome.SKIP: "SKIP",
          Outcome.ERROR: "ERROR", Outcome.MISS: "MISS"}
EXCERPT_MAX = 16384


def _token(text: str) -> str:
    """A piece of an id or a path: letters, digits, '_' and '-' only."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", text)


KCIDB_ARCH = {"amd64": "x86_64", "arm64": "arm64"}  # Debian's architecture names, as the kernel's


def _checkout(kernel: KernelResult, origin: str) -> dict[str, Any]:
    o = kernel.origin
    if o.kind == "debian":
        key, comment = f"debian:{o.package}={o.version}", o.describe()
        misc: dict[str, Any] = {"package": o.package, "version": o.version, "suite": o.suite}
        tree = f"debian/{o.suite}"
    elif o.kind == "host":
        key, comment, misc, tree = f"host:{kernel.release}", f"the host's running kernel {kernel.release}", {}, "host"
    else:
        key, comment, misc, tree = f"image:{o.sha256}", f"an image file, {o.path}", {"path": o.path}, "image"
    checkout = {"id": f"{origin}:{key}", "origin": origin, "tree_name": tree, "comment": comment,
                "start_time": kernel.recorded_at}
    if misc:
        checkout["misc"] = {k: v for k, v in misc.items() if v is not None}
    return checkout


def _excerpt(kernel: KernelResult, results_dir: Path) -> str:
    log = console_log_path(results_dir, kernel.kernel_id)
    text = kernel.boot.console_tail or (log.read_text(errors="replace")[-4000:] if log.exists() else "")
    return text.replace("\0", "")[-EXCERPT_MAX:]


def render_kcidb(kernels: list[KernelResult], results_dir: Path, origin: str = "sigwake",
                 log_base_url: str | None = None) -> dict[str, Any]:
    if not re.fullmatch(r"[a-z0-9_]+", origin):
        raise ValueError(f"KCIDB origin {origin!r}: lowercase letters, digits and '_' only")
    base = log_base_url.rstrip("/") if log_base_url else results_dir.resolve().as_uri()
    checkouts: dict[str, dict[str, Any]] = {}
    builds, tests = [], []
    for kernel in kernels:
        checkout = _checkout(kernel, origin)
        checkouts[checkout["id"]] = checkout
        build_key = kernel.origin.sha256 or _token(f"{kernel.kernel_id}-{kernel.release}")
        build = {"id": f"{origin}:{build_key}", "origin": origin, "checkout_id": checkout["id"],
                 "architecture": KCIDB_ARCH.get(kernel.origin.arch or "amd64", "x86_64"), "comment": f"{kernel.kernel_id}: release {kernel.release or 'unknown'}",
                 "misc": {"kernel_id": kernel.kernel_id, "release": kernel.release or "", "boot": kernel.boot.status}}
        if kernel.origin.flavour:
            build["misc"]["flavour"] = kernel.origin.flavour
        if kernel.origin.lava_job_url:
            build["misc"]["lava_job_url"] = kernel.origin.lava_job_url
        builds.append(build)
        log_url = f"{base}/{console_log_path(Path('.'), kernel.kernel_id).name}"
        excerpt = _excerpt(kernel, results_dir)
        for privilege, cases in judged_cases(kernel).items():
            for judged in cases:
                case = judged.case
                test: dict[str, Any] = {
                    "id": f"{origin}:{build_key}:{_token(privilege)}:{_token(case.name)}",
                    "origin": origin, "build_id": build["id"], "path": f"sigwake.{_token(case.name)}",
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
                if judged.outcome is Outcome.FAIL:
                    test["misc"]["difference"] = judged.why
                if judged.outcome not in (Outcome.PASS, Outcome.SKIP) and excerpt:
                    test["log_excerpt"] = excerpt
                tests.append(test)
    return {"version": SCHEMA_VERSION, "checkouts": list(checkouts.values()), "builds": builds, "tests": tests}
