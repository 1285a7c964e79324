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
    lines: list[int] = field(default_factory=list)  # the console line (1-based) of each payload
    rejected: int = 0  # frames with another token, a bad CRC or a replayed sequence number
    missing: list[int] = field(default_factory=list)  # sequence numbers that never arrived intact


def unframe(console: str, token: str) -> Unframed:
    out = Unframed()
    expected = 0
    line, counted = 1, 0  # the line number at offset `counted`, advanced frame by frame
    for match in FRAME.finditer(console):
        line += console.count("\n", counted, match.start())
        counted = match.start()
        payload = match["payload"]
        seq = int(match["seq"])
        crc = zlib.crc32(f"{match['token']} {seq} {payload}".encode()) & 0xFFFFFFFF
        if match["token"] != token or f"{crc:08x}" != match["crc"] or seq < expected:
            out.rejected += 1
            continue
        out.missing.extend(range(expected, seq))
        out.payloads.append(payload)
        out.lines.append(line)
        expected = seq + 1
    return out


def likeliest_token(console: str) -> str:
    """The token of most frames whose CRC holds: for reading a console log whose boot token was not kept
    (a result file of schema 2); a live boot is always read with its own token."""
    tokens: dict[str, int] = {}
    for match in FRAME.finditer(console):
        crc = zlib.crc32(f"{match['token']} {match['seq']} {match['payload']}".encode()) & 0xFFFFFFFF
        if f"{crc:08x}" == match["crc"]:
            tokens[match["token"]] = tokens.get(match["token"], 0) + 1
    return max(tokens, key=lambda t: tokens[t]) if tokens else ""


def panic_line(console: str) -> str | None:
    match = PANIC.search(console)
    return match.group(0) if match else None


def tail(console: str, lines: int = 40) -> str:
    return "\n".join(console.replace("\r", "").splitlines()[-lines:])
