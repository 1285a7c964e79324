"""core/file_lock.py for real, between processes: a second sigwake waits for the first and says so, a
holder that never lets go is named when the deadline passes, and a killed holder leaves no lock behind.
Every wait here is bounded: each child runs with a lock deadline of its own, and each read has a timeout."""

from __future__ import annotations

import fcntl
import os
import re
import select
import subprocess
import sys
from pathlib import Path
from typing import IO

from sigwake.commands.cli import REPO

# argv: the lock, the child's lock deadline in seconds, "stay" (hold it until stdin closes or killed) or "leave".
HOLDER = """
import sys
from pathlib import Path
from sigwake.core import file_lock
from sigwake.core.progress import Progress
file_lock.LOCK_DEADLINE_S = float(sys.argv[2])
with file_lock.held(Path(sys.argv[1]), Progress(), "the test's thing"):
    print("in", flush=True)
    if sys.argv[3] == "stay":
        sys.stdin.read()
"""
BOUND_S = 60.0  # for any one step of a child that works; only a broken lock would come near it


def child(lock: Path, deadline_s: float, stay: bool) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "harness")}
    return subprocess.Popen([sys.executable, "-c", HOLDER, str(lock), str(deadline_s), "stay" if stay else "leave"],
                            stdin=subprocess.PIPE if stay else subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def line_within(stream: IO[str] | None, seconds: float) -> str | None:
    """The stream's next line, or None if none came within `seconds` (each child writes whole lines)."""
    assert stream is not None
    ready, _, _ = select.select([stream], [], [], seconds)
    return stream.readline() if ready else None


def test_a_second_sigwake_waits_for_the_first_says_so_and_then_goes_on(tmp_path: Path) -> None:
    lock = tmp_path / "thing.lock"
    with lock.open("a") as mine:
        fcntl.flock(mine, fcntl.LOCK_EX)
        other = child(lock, BOUND_S, stay=False)
        said = line_within(other.stderr, BOUND_S)
        assert said is not None and "waiting for another sigwake using the test's thing" in said and str(lock) in said
        assert line_within(other.stdout, 0.5) is None  # not in while we hold it (an "in" would be there by now)
        fcntl.flock(mine, fcntl.LOCK_UN)
    out, _ = other.communicate(timeout=BOUND_S)
    assert out == "in\n" and other.returncode == 0


def test_a_holder_that_never_lets_go_is_named_at_the_deadline(tmp_path: Path) -> None:
    lock = tmp_path / "thing.lock"
    stuck = child(lock, BOUND_S, stay=True)
    try:
        assert line_within(stuck.stdout, BOUND_S) == "in\n"
        late = child(lock, 0.5, stay=False)
        out, err = late.communicate(timeout=BOUND_S)
        assert late.returncode != 0 and out == ""
        assert re.search(rf"LockTimeout: another process has held {re.escape(str(lock))} \(the test's thing\)", err), err
    finally:
        stuck.kill()
        stuck.communicate(timeout=BOUND_S)


def test_a_killed_holder_leaves_no_lock_behind(tmp_path: Path) -> None:
    lock = tmp_path / "thing.lock"
    dead = child(lock, BOUND_S, stay=True)
    assert line_within(dead.stdout, BOUND_S) == "in\n"
    dead.kill()
    dead.communicate(timeout=BOUND_S)
    after = child(lock, 5.0, stay=False)
    out, err = after.communicate(timeout=BOUND_S)
    assert out == "in\n" and after.returncode == 0 and "waiting" not in err  # taken at once: the kernel dropped it
