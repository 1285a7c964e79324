"""Reading the guest's serial console: the framed result lines (format in
repro/guest/frame.h) and the signs of a kernel that died."""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field

FRAME = re.compile(r"SIGWAKE (?P<token>[0-9a-f]+) (?P<seq>\d+) (?P<crc>[0-9a-f]{8}) (?P<payload>[^\r\n]*)")
PANIC = re.compile(r"Kernel panic - not syncing[^\r\n]*")


def frame_line(token: str, seq: int, payload: str) -> str:
    """One framed line, as the guest init writes it (used to build test consoles)."""
    crc = zlib.crc32(f"{token} {seq} {payload}".encode()) & 0xFFFFFFFF
    return f"SIGWAKE {token} {seq} {crc:08x} {payload}\n"


@dataclass
class Unframed:
    payloads: list[str] = field(default_factory=list)  # in order, each verified
    rejected: int = 0  # frames with another token, a bad CRC or a replayed sequence number
    missing: list[int] = field(default_factory=list)  # sequence numbers that never arrived intact


def unframe(console: str, token: str) -> Unframed:
    out = Unframed()
    expected = 0
    for match in FRAME.finditer(console):
        payload = match["payload"]
        seq = int(match["seq"])
        crc = zlib.crc32(f"{match['token']} {seq} {payload}".encode()) & 0xFFFFFFFF
        if match["token"] != token or f"{crc:08x}" != match["crc"] or seq < expected:
            out.rejected += 1
            continue
        out.missing.extend(range(expected, seq))
        out.payloads.append(payload)
        expected = seq + 1
    return out


def panic_line(console: str) -> str | None:
    match = PANIC.search(console)
    return match.group(0) if match else None


def tail(console: str, lines: int = 40) -> str:
    return "\n".join(console.replace("\r", "").splitlines()[-lines:])
