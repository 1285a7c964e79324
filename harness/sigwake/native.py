"""The host kernel, tested natively: each reproducer runs as a program here."""

from __future__ import annotations

import os
import subprocess
import time

from .binaries import Binaries
from .ktap import parse_repro
from .results import ReproResult
from .verdicts import Verdict


def run_reproducer(name: str, program: os.PathLike[str], timeout_s: float) -> ReproResult:
    start = time.monotonic()
    try:
        done = subprocess.run([os.fspath(program)], capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return ReproResult(name, Verdict.TIMEOUT, f"still running after {timeout_s} s")
    took_ms = (time.monotonic() - start) * 1000
    doc = parse_repro(done.stdout.splitlines())
    verdict, reason = doc.decide()
    if verdict is not Verdict.ERROR and done.returncode != {Verdict.DELIVERED: 0, Verdict.UNSUPPORTED: 4}.get(verdict, 1):
        verdict, reason = Verdict.ERROR, f"exit code {done.returncode} contradicts verdict={verdict}"
    return ReproResult(name, verdict, reason, doc.evidence, round(took_ms, 2))


def run_all(binaries: Binaries, timeout_s: float) -> list[ReproResult]:
    return [run_reproducer(name, path, timeout_s) for name, path in sorted(binaries.reproducers.items())]
