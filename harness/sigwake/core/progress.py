"""Progress lines on stderr, so that stdout carries only results."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TextIO


# How often a long step (a download, a build) says how far it got.
EVERY_S = 15.0


@dataclass
class Progress:
    stream: TextIO = field(default_factory=lambda: sys.stderr)
    quiet: bool = False
    started: float = field(default_factory=time.monotonic)

    def step(self, message: str) -> None:
        if not self.quiet:
            elapsed = time.monotonic() - self.started
            print(f"[{elapsed:6.1f}s] {message}", file=self.stream, flush=True)
