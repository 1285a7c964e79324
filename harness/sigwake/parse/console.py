"""Reading the guest's serial console: the framed result lines (format in
repro/guest/frame.h) and the signs of a kernel that died."""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field

FRAME = re.compile(r"SIGWAKE (?P<token>[0-9a-f]+) (?P<seq>\d+) (?P<crc>[0-9a-f]{8}) (?P<payload>[^\r\n]*)")
# printk's "[    5.960677]", and with CONFIG_PRINTK_CALLER its caller ("[  T123]", "[    C0]") after it
PRINTK_STAMP = r"\[\s*(?P<seconds>\d+\.\d+)\](?:\[\s*[TC]\d+\])?"
SPLICED = re.compile(PRINTK_STAMP + " ")  # a printk line's timestamp inside a frame's line
PANIC = re.compile(r"Kernel panic - not syncing[^\r\n]*")
# How far ahead of the last accepted frame the next may be: a few torn frames are lost, a frame that jumps
# further (a forged far-ahead number) is rejected rather than allowed to reject every genuine frame after it.
SEQ_WINDOW = 64


def frame_line(token: str, seq: int, payload: str) -> str:
    """One framed line, as the guest init writes it (used to build test consoles)."""
    crc = zlib.crc32(f"{token} {seq} {payload}".encode()) & 0xFFFFFFFF
    return f"SIGWAKE {token} {seq} {crc:08x} {payload}\n"


@dataclass
class Unframed:
    payloads: list[str] = field(default_factory=list)  # in order, each verified
    lines: list[int] = field(default_factory=list)  # the console line (1-based) of each payload
    rejected: int = 0  # frames with another token, a bad CRC, a replayed or a far-ahead sequence number, or
    # inside a kernel line
    missing: list[int] = field(default_factory=list)  # sequence numbers that never arrived intact
    missing_before: list[int] = field(default_factory=list)  # for each, the console line of the next intact frame


def framed_by_guest(console: str, match: re.Match[str]) -> bool:
    """Whether a frame is the guest init's own: no printk timestamp before it on its line. The kernel ends every
    line it prints (a console shows only finished records), so a frame behind one of its timestamps is inside
    the kernel's text: a string a process chose that the kernel quoted, with a token a BPF program could read
    off init's writes. (Firmware's escape sequences may come before init's first frame: they have no timestamp.)"""
    line_start = console.rfind("\n", 0, match.start()) + 1
    return SPLICED.search(console, line_start, match.start()) is None


def crc_holds(match: re.Match[str], payload: str) -> bool:
    framed = " ".join((match["token"], match["seq"], payload))
    return f"{zlib.crc32(framed.encode()) & 0xFFFFFFFF:08x}" == match["crc"]


def mended(match: re.Match[str]) -> str:
    """A frame's payload; where the kernel printed a line right after it, before its newline (the serial
    console takes printk output whenever it comes), the payload without that line: cut at its timestamp.
    Only a CRC that holds makes a mended payload. (A frame the printk line cut in two is rejoined()
    before.)"""
    payload = match["payload"]
    if crc_holds(match, payload) or (spliced := SPLICED.search(payload)) is None:
        return payload
    head = payload[:spliced.start()]
    return head if crc_holds(match, head) else payload


def rejoined(console: str) -> str:
    """The console with every frame that a printk line cut in two before its payload (inside the token,
    the sequence number or the CRC: a poweroff message has landed there) put back together: the frame's
    head and the rest of it on the next line become one line, the printk line follows it, so every frame
    keeps its line number. Only a whole frame whose CRC holds is put back."""
    lines = console.split("\n")
    for i in range(len(lines) - 1):
        spliced = SPLICED.search(lines[i], 1)
        if spliced is None:
            continue
        joined = lines[i][:spliced.start()] + lines[i + 1].lstrip("\r")
        match = FRAME.fullmatch(joined.rstrip("\r"))
        if match is not None and crc_holds(match, match["payload"]):
            lines[i], lines[i + 1] = joined, lines[i][spliced.start():]
    return "\n".join(lines)


def unframe(console: str, token: str) -> Unframed:
    out = Unframed()
    expected = 0
    line, counted = 1, 0  # the line number at offset `counted`, advanced frame by frame
    console = rejoined(console)
    for match in FRAME.finditer(console):
        line += console.count("\n", counted, match.start())
        counted = match.start()
        payload = mended(match)
        seq = int(match["seq"])
        if match["token"] != token or not crc_holds(match, payload) or not expected <= seq <= expected + SEQ_WINDOW \
                or not framed_by_guest(console, match):
            out.rejected += 1
            continue
        out.missing.extend(range(expected, seq))
        out.missing_before.extend([line] * (seq - expected))
        out.payloads.append(payload)
        out.lines.append(line)
        expected = seq + 1
    return out


def likeliest_token(console: str) -> str:
    """The token of most frames whose CRC holds: for reading a console log whose boot token was not kept
    (a result file of schema 2); a live boot is always read with its own token."""
    tokens: dict[str, int] = {}
    for match in FRAME.finditer(console):
        if crc_holds(match, match["payload"]):
            tokens[match["token"]] = tokens.get(match["token"], 0) + 1
    return max(tokens, key=lambda t: tokens[t]) if tokens else ""


# The first line every Linux kernel prints (init/main.c's linux_banner): the kernel image started.
BANNER = re.compile(r"Linux version \d+\.\d+\S* \(")


def kernel_banner(console: str) -> str | None:
    match = BANNER.search(console)
    return match.group(0) if match else None


# init/initramfs.c's words when it could not unpack an archive: ours no longer fits the guest's memory.
UNPACK_FAILED = re.compile(r"Initramfs unpacking failed: [^\r\n]*")


def unpack_failure(console: str) -> str | None:
    match = UNPACK_FAILED.search(console)
    return match.group(0) if match else None


def panic_line(console: str) -> str | None:
    match = PANIC.search(console)
    return match.group(0) if match else None


def tail(console: str, lines: int = 40) -> str:
    return "\n".join(console.replace("\r", "").splitlines()[-lines:])
