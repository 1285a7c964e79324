"""One sigwake at a time on a shared thing (a cached package, a suite's apt state, a build directory): an
exclusive flock on a lock file, held for a block. Two commands, or two test workers, then wait for each
other instead of downloading, extracting or building the same files at once. The kernel drops the lock
when its holder dies, so a killed run never leaves one behind."""

from __future__ import annotations

import fcntl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .progress import Progress

# A holder downloads a kernel (DOWNLOAD_TIMEOUT_S, 900 s) or builds the reproducers; far longer is a stuck one.
LOCK_DEADLINE_S = 3600.0
# How often a waiter tries again: flock has no timed wait, and the holder's work takes seconds to minutes.
RETRY_S = 0.25


class LockTimeout(RuntimeError):
    """Another process held the lock past LOCK_DEADLINE_S."""


@contextmanager
def held(lock: Path, progress: Progress, what: str, shared: bool = False) -> Iterator[None]:
    """`lock` held for the block, exclusively or (`shared`, for readers) beside other readers; `what` names
    the thing it guards in the waiting message."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as f:
        deadline = time.monotonic() + LOCK_DEADLINE_S
        said = False
        while True:
            try:
                fcntl.flock(f, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LockTimeout(f"another process has held {lock} ({what}) for over {LOCK_DEADLINE_S:.0f} s")
                if not said:
                    progress.step(f"waiting for another sigwake using {what} (lock {lock})")
                    said = True
                time.sleep(RETRY_S)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
