"""The one way sigwake writes a file that must never be seen half-written: into a
hidden partial file beside it, then a rename over it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


@contextmanager
def atomic_stream(path: Path) -> Iterator[BinaryIO]:
    """A binary stream that becomes `path` when the block ends; nothing of it on an error."""
    partial = path.with_name(f".{path.name}.partial")
    try:
        with partial.open("wb") as out:
            yield out
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def atomic_write(path: Path, data: str | bytes) -> Path:
    with atomic_stream(path) as out:
        out.write(data.encode() if isinstance(data, str) else data)
    return path
