"""What every target boots the same way (QEMU here, a lab's device): the kernel command line the init reads,
and the shared initramfs with this boot's own token added."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..core import protocol
from ..programs import initramfs
from .options import RunOptions


def boot_arguments(config: RunOptions, mode: str = "run", resume: str = "") -> tuple[str, ...]:
    """The kernel command line beyond qemu.base_append(): what the init reads (one rule for every target)."""
    keys = protocol.KEYS
    return (f"{keys['timeout_ms']}={config.repro_timeout_ms}", f"{keys['mode']}={mode}",
            f"{keys['repeat']}={config.repeat}", f"{keys['agree']}={config.agree}", f"{keys['passes']}={','.join(config.privileges)}",
            *([f"{keys['resume']}={resume}"] if resume else []),
            *([f"{keys['cases']}={','.join(config.cases)}"] if config.cases else []))


def write_boot_initrd(initrd: Path, token: str, out_path: Path, lava_table: str = "") -> None:
    """The shared initramfs plus this boot's token, root-only, never on the command line (see
    repro/guest/init.cc): every boot, local or in a lab, gets its own token; a LAVA job, its table."""
    with initrd.open("rb") as shared, out_path.open("wb") as out:
        shutil.copyfileobj(shared, out)
        out.write(initramfs.token_archive(token, lava_table))
