"""The one way sigwake writes a file that must never be seen half-written: into a
hidden partial file beside it (one per writer), then a rename over it. A full
disk is said plainly, with the file and the space it needed, and leaves the
earlier file and no partial behind."""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


class DiskFullError(OSError):
    """No space for a file sigwake writes; the message names it."""


@contextmanager
def atomic_stream(path: Path, size_hint: int | None = None) -> Iterator[BinaryIO]:
    """A binary stream that becomes `path` when the block ends; nothing of it on an error."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.partial")
    try:
        with partial.open("wb") as out:
            yield out
        os.replace(partial, path)
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.EDQUOT):
            needed = f"{size_hint} bytes" if size_hint is not None else "more space"
            raise DiskFullError(e.errno, f"no space left to write {path} ({needed} needed on its filesystem); "
                                         f"{'the earlier ' + path.name + ' is kept' if path.exists() else 'nothing was written'}") from e
        raise
    finally:
        partial.unlink(missing_ok=True)


def atomic_write(path: Path, data: str | bytes) -> Path:
    raw = data.encode() if isinstance(data, str) else data
    with atomic_stream(path, len(raw)) as out:
        out.write(raw)
    return path
