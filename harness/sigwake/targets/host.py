"""This machine's own kernel as a target: sigwake-run (repro/guest/run_main.cc)
runs the same case loop as a guest's PID 1 and prints the same framed KTAP,
which goes through the same parser; a pass the host cannot run is skipped with
its reason."""

from __future__ import annotations

import dataclasses
import secrets
import subprocess
import time
from pathlib import Path

from . import qemu
from ..programs.binaries import Binaries
from .capture import Capture
from .options import RunOptions
from .interpret import KernelOutcome, interpret


def run_host(binaries: Binaries, config: RunOptions, console_log: Path) -> KernelOutcome:
    token = secrets.token_hex(8)
    programs = sorted(binaries.reproducers)
    timeout_s = config.timeout_for(len(programs))
    argv = [*qemu.DIE_WITH_US, str(binaries.runner), "--timeout-ms", str(config.repro_timeout_ms), "--repeat", str(config.repeat),
            "--agree", str(config.agree),
            "--passes", ",".join(config.privileges), *(("--cases", ",".join(config.cases)) if config.cases else ()),
            *(a for name in sorted(binaries.peers) for a in ("--peer", str(binaries.peers[name]))),
            *(str(binaries.reproducers[name]) for name in programs)]
    started, start = time.time(), time.monotonic()
    try:
        done = subprocess.run(argv, input=token + "\n", capture_output=True, text=True, timeout=timeout_s,
                              start_new_session=True)  # a terminal's Ctrl-C is the harness's to handle
        stdout, stderr, code, timed_out = done.stdout, done.stderr, done.returncode, False
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout or ""
        stderr, code, timed_out = "", None, True
    console_log.parent.mkdir(parents=True, exist_ok=True)
    console_log.write_text(stdout)
    capture = Capture(stdout, code, timed_out, time.monotonic() - start, stderr, started=started)
    outcome = interpret(capture, token, programs, config.privileges, timeout_s, config.repeat,
                        binaries.catalogue.cases_of(programs, config.cases))
    if outcome.boot.status == "ok":  # nothing booted: the host ran it
        outcome = dataclasses.replace(outcome, boot=dataclasses.replace(outcome.boot, status="native"))
    return outcome
