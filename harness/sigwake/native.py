"""The host kernel, tested natively: each reproducer runs as a program here, as
root (the harness's own privilege), repeated like in the guest."""

from __future__ import annotations

import os
import subprocess
import time

from .binaries import Binaries
from .ktap import parse_program
from .repeats import CaseRun, combine
from .results import ReproResult
from .verdicts import Verdict


def run_program(name: str, program: os.PathLike[str], timeout_s: float, privilege: str) -> list[CaseRun]:
    start = time.monotonic()
    try:
        done = subprocess.run([os.fspath(program)], capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return [CaseRun(name, privilege, Verdict.TIMEOUT, f"still running after {timeout_s} s", {})]
    took_ms = round((time.monotonic() - start) * 1000, 2)
    cases = parse_program(done.stdout.splitlines()).verdicts()
    if not cases:
        return [CaseRun(name, privilege, Verdict.ERROR, f"no KTAP cases (exit {done.returncode})", {}, took_ms)]
    worst = 1 if any(v not in (Verdict.DELIVERED, Verdict.MEASURED, Verdict.UNSUPPORTED) for _, v, _, _ in cases) \
        else 4 if all(v is Verdict.UNSUPPORTED for _, v, _, _ in cases) else 0
    if done.returncode != worst:
        why = f"exit code {done.returncode} contradicts the verdicts (expected {worst})"
        return [CaseRun(case, privilege, Verdict.ERROR, why, evidence, took_ms) for case, _, _, evidence in cases]
    return [CaseRun(case, privilege, verdict, reason, evidence, took_ms) for case, verdict, reason, evidence in cases]


def run_all(binaries: Binaries, timeout_s: float, repeat: int = 1) -> list[ReproResult]:
    privilege = "root" if os.geteuid() == 0 else f"uid-{os.geteuid()}"
    runs = [run
            for name, path in sorted(binaries.reproducers.items())
            for _ in range(repeat)
            for run in run_program(name, path, timeout_s, privilege)]
    return combine(runs)
