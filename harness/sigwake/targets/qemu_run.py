"""One kernel under QEMU here: boot it with the reproducers in an initramfs and read its console; a boot that
crashes or hangs after the init started is followed by fresh ones for the runs after it (fresh_boots.py)."""

from __future__ import annotations

import secrets
import tempfile
from pathlib import Path

from ..kernels.kernels import Kernel
from . import qemu
from .boot_image import boot_arguments, write_boot_initrd
from .interpret import BootRead, KernelOutcome, combine_boots, read_boot
from .fresh_boots import with_fresh_boots
from .options import RunOptions


def boot_once(kernel: Kernel, initrd: Path, config: RunOptions, console_log: Path, mode: str, timeout_s: float,
              resume: str = "", line_offset: int = 0) -> BootRead:
    token = secrets.token_hex(8)
    with tempfile.TemporaryDirectory(prefix="sigwake-boot-") as tmp:
        boot_initrd = Path(tmp) / "initrd.cpio"
        write_boot_initrd(initrd, token, boot_initrd)
        assert kernel.image is not None, "the host kernel runs natively"
        request = qemu.BootRequest(kernel.image, boot_initrd, boot_arguments(config, mode, resume), config.accel,
                                   timeout_s, config.memory_mb, config.cpus, config.silence_s, config.stop, kernel.arch)
        return read_boot(qemu.boot(request, console_log), token, timeout_s, line_offset)


def run_qemu(kernel: Kernel, initrd: Path, programs: list[str], config: RunOptions, console_log: Path,
              mode: str = "run", cases: dict[str, tuple[str, ...]] | None = None) -> KernelOutcome:
    """Boots the kernel with the programs; when a boot crashes or hangs after the init started running them,
    the runs after the one in progress go on in fresh boots (with_fresh_boots), each with the whole cap
    (timeout_for), so none is cut short and taken for a hang: a kernel that dies in every case still has
    each case tried, in at most twice the cap."""
    timeout_s = config.timeout_for(len(programs))
    privileges = config.privileges if mode == "run" else ()

    def boot(log: Path, resume: str, offset: int) -> BootRead:
        return boot_once(kernel, initrd, config, log, mode, timeout_s, resume, offset)
    boots = with_fresh_boots(boot, console_log, timeout_s, fresh=mode == "run" and config.fresh_boots)
    return combine_boots(boots, programs, privileges, config.repeat, cases)
