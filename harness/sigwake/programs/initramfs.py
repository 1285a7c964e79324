"""The guest initramfs, written by us as a newc cpio archive (no root needed:
device nodes are only headers), and read back for tests."""

from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path

from ..core.atomic import atomic_write
from ..core.protocol import LAVA_FILE, TOKEN_FILE

MAGIC = b"070701"
TRAILER = "TRAILER!!!"
FIELDS = ("ino", "mode", "uid", "gid", "nlink", "mtime", "filesize", "devmajor", "devminor",
          "rdevmajor", "rdevminor", "namesize", "check")
HEADER_SIZE = len(MAGIC) + 8 * len(FIELDS)


class CpioError(ValueError):
    """An archive we cannot read."""


@dataclass(frozen=True)
class Entry:
    path: str  # relative, no leading slash
    mode: int  # file type and permission bits
    data: bytes = b""
    rdev: tuple[int, int] = (0, 0)


def directory(path: str) -> Entry:
    return Entry(path, stat.S_IFDIR | 0o755)


def executable(path: str, data: bytes) -> Entry:
    return Entry(path, stat.S_IFREG | 0o755, data)


def char_device(path: str, major: int, minor: int) -> Entry:
    return Entry(path, stat.S_IFCHR | 0o600, rdev=(major, minor))


def _pad(length: int) -> bytes:
    return b"\0" * (-length % 4)


def encode(entries: list[Entry]) -> bytes:
    out = bytearray()
    for ino, entry in enumerate([*entries, Entry(TRAILER, 0)], start=1):
        name = entry.path.encode() + b"\0"
        values = {
            "ino": ino if entry.path != TRAILER else 0,
            "mode": entry.mode,
            "nlink": 2 if stat.S_ISDIR(entry.mode) else 1 if entry.path != TRAILER else 0,
            "filesize": len(entry.data),
            "rdevmajor": entry.rdev[0],
            "rdevminor": entry.rdev[1],
            "namesize": len(name),
        }
        out += MAGIC + b"".join(b"%08x" % values.get(f, 0) for f in FIELDS)
        out += name + _pad(HEADER_SIZE + len(name))
        out += entry.data + _pad(len(entry.data))
    return bytes(out)


def decode(archive: bytes) -> list[Entry]:
    entries: list[Entry] = []
    pos = 0
    while True:
        if archive[pos:pos + 6] != MAGIC:
            raise CpioError(f"no newc header at offset {pos}")
        try:
            fields = {f: int(archive[pos + 6 + 8 * i:pos + 14 + 8 * i], 16) for i, f in enumerate(FIELDS)}
        except ValueError as e:
            raise CpioError(f"bad header at offset {pos}: {e}") from e
        name_start = pos + HEADER_SIZE
        name = archive[name_start:name_start + fields["namesize"] - 1].decode()
        data_start = name_start + fields["namesize"]
        data_start += -data_start % 4
        data_end = data_start + fields["filesize"]
        if data_end > len(archive):
            raise CpioError(f"{name}: data runs past the end of the archive")
        if name == TRAILER:
            return entries
        entries.append(Entry(name, fields["mode"], archive[data_start:data_end],
                             (fields["rdevmajor"], fields["rdevminor"])))
        pos = data_end + (-data_end % 4)


def write(entries: list[Entry], dest: Path) -> Path:
    return atomic_write(dest, encode(entries))


def guest_entries(init: Path, reproducers: dict[str, Path], peers: dict[str, Path] | None = None) -> list[Entry]:
    """/init, /repro/<name> for each reproducer, /peer/peer-<name> for each upstream selftest (when there are),
    and the nodes the init needs before devtmpfs."""
    entries = [directory(d) for d in ("dev", "proc", "sys", "repro", *(("peer",) if peers else ()))]
    entries.append(char_device("dev/console", 5, 1))
    entries.append(executable("init", init.read_bytes()))
    entries += [executable(f"repro/{name}", path.read_bytes()) for name, path in sorted(reproducers.items())]
    entries += [executable(f"peer/peer-{name}", path.read_bytes()) for name, path in sorted((peers or {}).items())]
    return entries


def token_archive(token: str, lava_table: str = "") -> bytes:
    """A second archive for one boot: the token file, readable by root only, and in a LAVA job the table of
    what its lab shows for each run (judge/lava_results.py). The kernel unpacks concatenated archives in
    order, so it joins the shared initramfs."""
    path = TOKEN_FILE.lstrip("/")
    entries = [directory(path.rsplit("/", 1)[0]), Entry(path, stat.S_IFREG | 0o400, token.encode() + b"\n")]
    if lava_table:
        entries.append(Entry(LAVA_FILE.lstrip("/"), stat.S_IFREG | 0o444, lava_table.encode()))
    return encode(entries)
