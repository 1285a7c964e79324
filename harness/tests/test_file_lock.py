"""core/file_lock.py for real, between processes: a second sigwake waits for the first and says so, a
holder that never lets go is named when the deadline passes, and a killed holder leaves no lock behind."""

from __future__ import annotations

import fcntl
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sigwake.commands.cli import REPO
from sigwake.core import file_lock
from sigwake.core.file_lock import LockTimeout, held
from sigwake.core.progress import Progress

HOLDER = """
import sys
from pathlib import Path
from sigwake.core.file_lock import held
from sigwake.core.progress import Progress
with held(Path(sys.argv[1]), Progress(), "the test's thing"):
    print("in", flush=True)
    sys.stdin.read()  # holds the lock until its stdin closes, or it is killed
"""


def holder(lock: Path, stays: bool = True) -> subprocess.Popen[str]:
    """`stays`: it keeps the lock until killed; otherwise it leaves as soon as it is in."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "harness")}
    return subprocess.Popen([sys.executable, "-c", HOLDER, str(lock)],
                            stdin=subprocess.PIPE if stays else subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def test_a_second_sigwake_waits_for_the_first_says_so_and_then_goes_on(tmp_path: Path) -> None:
    lock = tmp_path / "thing.lock"
    with lock.open("a") as mine:
        fcntl.flock(mine, fcntl.LOCK_EX)
        other = holder(lock, stays=False)  # one that did not wait would end, and the read below with it
        assert other.stderr is not None
        said = other.stderr.readline()  # written before it waits
        assert "waiting for another sigwake using the test's thing" in said and str(lock) in said
        assert other.poll() is None
        fcntl.flock(mine, fcntl.LOCK_UN)
    out, _ = other.communicate(timeout=60)
    assert out == "in\n" and other.returncode == 0


def test_a_holder_that_never_lets_go_is_named_at_the_deadline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lock = tmp_path / "thing.lock"
    monkeypatch.setattr(file_lock, "LOCK_DEADLINE_S", 0.5)
    stuck = holder(lock)
    try:
        assert stuck.stdout is not None and stuck.stdout.readline() == "in\n"
        with pytest.raises(LockTimeout, match=f"another process has held {lock}"):
            with held(lock, Progress(io.StringIO()), "the test's thing"):
                pytest.fail("entered a lock another process holds")
    finally:
        stuck.kill()
        stuck.communicate(timeout=60)


def test_a_killed_holder_leaves_no_lock_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lock = tmp_path / "thing.lock"
    monkeypatch.setattr(file_lock, "LOCK_DEADLINE_S", 5.0)
    dead = holder(lock)
    assert dead.stdout is not None and dead.stdout.readline() == "in\n"
    dead.kill()
    dead.communicate(timeout=60)
    said = io.StringIO()
    with held(lock, Progress(said), "the test's thing"):
        pass
    assert said.getvalue() == ""  # taken at once: the kernel dropped the dead holder's lock
