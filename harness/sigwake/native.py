"""The host kernel, tested natively: each reproducer case runs as its own
process here, as root (the harness's own privilege), repeated like in the
guest, under the kernel-path tracer when one is given."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from .binaries import Binaries
from .ktap import parse_program
from .repeats import CaseRun, combine
from .results import ReproResult
from .verdicts import Verdict

KERNEL_PATH = "# kernel_path."  # what sigwake-kernel-path adds after the program's output


def list_cases(program: Path) -> list[str | None]:
    done = subprocess.run([str(program), "--list"], capture_output=True, text=True, timeout=30)
    return list(done.stdout.split()) if done.returncode == 0 else []


def run_case(program: Path, case: str | None, timeout_s: float, privilege: str, tracer: Path | None) -> list[CaseRun]:
    argv = [str(program)] + (["--case", case] if case else [])
    if tracer is not None:
        argv.insert(0, str(tracer))
    name = case or program.name
    start = time.monotonic()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return [CaseRun(name, privilege, Verdict.TIMEOUT, f"still running after {timeout_s} s", {})]
    took_ms = round((time.monotonic() - start) * 1000, 2)
    lines = done.stdout.splitlines()
    path = dict(line[len(KERNEL_PATH):].split("=", 1) for line in lines if line.startswith(KERNEL_PATH))
    document = parse_program([line for line in lines if not line.startswith(KERNEL_PATH)])
    ended = f"exit {done.returncode}" if done.returncode >= 0 else f"killed by signal {-done.returncode}"
    judged = document.judged(name, ended, done.returncode if done.returncode >= 0 else None)
    return [CaseRun(c, privilege, verdict, reason, evidence, took_ms, path) for c, verdict, reason, evidence in judged]


def run_all(binaries: Binaries, timeout_s: float, repeat: int = 1, tracer: Path | None = None) -> list[ReproResult]:
    privilege = "root" if os.geteuid() == 0 else f"uid-{os.geteuid()}"
    runs = [run
            for _, program in sorted(binaries.reproducers.items())
            for case in (list_cases(program) or [None])  # None: a program that cannot list runs whole
            for _ in range(repeat)
            for run in run_case(program, case, timeout_s, privilege, tracer)]
    return combine(runs)
