"""One kernel under QEMU here: boot it with the reproducers in an initramfs and read its console; a boot that
crashes or hangs after the init started is followed by a fresh one for the runs after it, for as long as the
kernel's time lasts."""

from __future__ import annotations

import dataclasses
import secrets
import tempfile
from pathlib import Path

from ..kernels.kernels import Kernel
from . import qemu
from .boot_image import boot_arguments, write_boot_initrd
from .interpret import BootRead, KernelOutcome, combine_boots, read_boot
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
    the runs after the one in progress go on in a fresh boot, its console appended to the same log after a
    line that says so. Each fresh boot makes progress (it starts after the run that ended the last one), so
    they go on while the boots so far took less than one boot's cap (timeout_for): a kernel that dies in
    every case still has each case tried, and its time is bounded (at most twice the cap); each fresh boot
    has the whole cap, so none is cut short and taken for a hang. When time stops them, the detail says so."""
    timeout_s = config.timeout_for(len(programs))
    privileges = config.privileges if mode == "run" else ()
    boots = [boot_once(kernel, initrd, config, console_log, mode, timeout_s)]
    while mode == "run" and boots[-1].resumable():
        spent = sum(b.outcome.seconds for b in boots)
        if spent >= timeout_s:
            boots[-1] = dataclasses.replace(boots[-1], detail=f"{boots[-1].detail}; no fresh boot after this one: "
                                                              f"the boots took {spent:.0f} s of {timeout_s:.0f} s")
            break
        key = boots[-1].resume_key()
        if len(boots) > 1 and key == boots[-2].resume_key():  # no progress: the init did not get past it
            boots[-1] = dataclasses.replace(boots[-1], detail=f"{boots[-1].detail}; no fresh boot after this one: "
                                                              f"it ended in the run the last one ended in ({key})")
            break
        resumed_log = console_log.with_name(console_log.name + ".resumed")
        with console_log.open("a") as log:
            log.write(f"\n=== sigwake: boot {len(boots) + 1}, a fresh boot after {key} ended boot {len(boots)} "
                      f"({boots[-1].status}) ===\n")
        offset = len(console_log.read_text(errors="replace").split("\n")) - 1
        boots.append(boot_once(kernel, initrd, config, resumed_log, mode, timeout_s, key, offset))
        with console_log.open("a") as log:
            log.write(resumed_log.read_text(errors="replace") if resumed_log.exists() else "")
        resumed_log.unlink(missing_ok=True)
    return combine_boots(boots, programs, privileges, config.repeat, cases)
