"""Files that look like kernel images to a header check and are not: what a corrupt download is."""

from __future__ import annotations

import os


def corrupt_bzimage(size: int = 64 * 1024) -> bytes:
    """Random bytes with an x86 boot header's magic ("HdrS" at 0x202): refused by QEMU or the kernel, not by
    sigwake's check."""
    data = bytearray(os.urandom(size))
    data[0x202:0x206] = b"HdrS"
    return bytes(data)
