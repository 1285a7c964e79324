"""The newc writer, read back."""

import stat
from pathlib import Path

import pytest

from sigwake.programs import initramfs
from sigwake.programs.binaries import Binaries


def test_round_trip_keeps_paths_modes_data_and_devices() -> None:
    entries = [
        initramfs.directory("dev"),
        initramfs.char_device("dev/console", 5, 1),
        initramfs.executable("init", b"\x7fELF" + bytes(range(256)) * 3),
        initramfs.executable("repro/odd", b"abc"),  # sizes that need padding
    ]
    assert initramfs.decode(initramfs.encode(entries)) == entries


def test_archive_is_padded_and_ends_with_the_trailer() -> None:
    archive = initramfs.encode([initramfs.executable("a", b"x")])
    assert len(archive) % 4 == 0
    assert b"TRAILER!!!\0" in archive


def test_corrupt_archives_are_refused() -> None:
    archive = initramfs.encode([initramfs.executable("a", b"hello")])
    with pytest.raises(initramfs.CpioError):
        initramfs.decode(b"070707" + archive[6:])
    with pytest.raises(initramfs.CpioError):
        initramfs.decode(archive[:120])


def test_guest_initramfs_holds_init_and_every_reproducer(built: Binaries, tmp_path: Path) -> None:
    path = built.initramfs(tmp_path / "guest.cpio")
    entries = {e.path: e for e in initramfs.decode(path.read_bytes())}
    assert entries["init"].data == built.init.read_bytes()
    assert entries["init"].mode == stat.S_IFREG | 0o755
    assert entries["dev/console"].rdev == (5, 1) and stat.S_ISCHR(entries["dev/console"].mode)
    for name, program in built.reproducers.items():
        assert entries[f"repro/{name}"].data == program.read_bytes()
    assert set(built.reproducers) >= {"watermark_sigio", "watermark_poll", "overflow_sigio"}


def test_the_boot_token_travels_root_only_in_an_appended_archive() -> None:
    archive = initramfs.token_archive("c0ffee")
    (directory, token) = initramfs.decode(archive)
    assert directory.path == "sigwake" and token.path == "sigwake/token"
    assert token.data == b"c0ffee\n"
    assert stat.S_IMODE(token.mode) == 0o400 and stat.S_ISREG(token.mode)  # root (uid 0 in the archive) only
    assert len(archive) % 4 == 0  # so that the kernel finds its header right after the shared archive
