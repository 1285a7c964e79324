"""How Debian names its kernel packages, written once: the flavours of each
architecture, the ending each gives a package name, the series of the default
set, the patterns that find a flavour's packages, and this machine's architecture in
Debian's words. Pure rules, no I/O."""

from __future__ import annotations

import os
import re

# This machine's architecture as Debian names it (uname's x86_64 is amd64).
HOST_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}.get(os.uname().machine, os.uname().machine)

# The architectures whose kernels sigwake can boot (qemu.py, the initramfs's programs).
BOOTABLE_ARCHES = ("amd64", "arm64")

# Debian's kernel flavours per architecture.
FLAVOURS: dict[str, tuple[str, ...]] = {"amd64": ("generic", "cloud", "rt"), "arm64": ("generic", "cloud", "rt", "16k")}

# The default set: one kernel before the fix (v6.10) and three after it; each pattern is completed by an ending.
SERIES: tuple[tuple[str, str], ...] = (
    ("bookworm", r"linux-image-6\.1\.0-\d+"),
    ("bookworm-backports", r"linux-image-6\.12\.[\d.]+\+deb12(\.\d+)?"),
    ("trixie", r"linux-image-6\.12\.[\d.]+\+deb13(\.\d+)?"),
    ("sid", r"linux-binary-7\.2\.[\d.]+\+deb14"),
)

# How a package name ends: its flavour and architecture (-amd64, -cloud-amd64, -rt-arm64, -arm64-16k).
_ENDING = re.compile(r"-(?:(?P<flavour>cloud|rt)-)?(?P<arch>amd64|arm64)(?P<pages>-16k)?$")


def ending(arch: str, flavour: str) -> str:
    """What a package name of this architecture and flavour ends with: -amd64, -cloud-amd64, -arm64-16k."""
    return {"generic": f"-{arch}", "cloud": f"-cloud-{arch}", "rt": f"-rt-{arch}", "16k": f"-{arch}-16k"}[flavour]


def flavour_of(package: str) -> str | None:
    """generic, cloud, rt or 16k; None for a name that is no flavoured kernel package."""
    match = _ENDING.search(package)
    return (match["flavour"] or ("16k" if match["pages"] else "generic")) if match else None


def arch_of(package: str) -> str | None:
    match = _ENDING.search(package)
    return match["arch"] if match else None


def any_version(flavour_ending: str) -> str:
    """Every package of one flavour, in any version: linux-image-6.1.0-57-amd64, linux-image-6.12.95+deb12-amd64,
    linux-binary-7.2.13+deb14-amd64 (the ABI ends right before the flavour, or -cloud-amd64 would match -amd64)."""
    return rf"linux-(image|binary)-\d+\.\d+(\.\d+)?(-\d+|\+deb\d+(\.\d+)?)-{re.escape(flavour_ending)}"


def as_glob(pattern: str) -> str:
    """A package-name pattern as a person reads it: linux-image-6\\.1\\.0-\\d+-amd64 -> linux-image-6.1.0-*-amd64."""
    return re.sub(r"\(\\\.\\d\+\)\?", "", pattern).replace(r"[\d.]+", "*").replace(r"\d+", "*").replace("\\", "")
