"""Files that look like kernel images to a header check and are not: what a corrupt download is."""

from __future__ import annotations

import os


def corrupt_bzimage(size: int = 64 * 1024) -> bytes:
    """Random bytes with an x86 boot header's magic ("HdrS" at 0x202): refused by QEMU, not by sigwake's check.
    Its boot protocol (0x206) is 1.00, too old for an initrd, so QEMU refuses it every time; with a random one
    QEMU sometimes ran the garbage and the boot hung instead."""
    data = bytearray(os.urandom(size))
    data[0x202:0x206] = b"HdrS"
    data[0x206:0x208] = (0x0100).to_bytes(2, "little")
    return bytes(data)
