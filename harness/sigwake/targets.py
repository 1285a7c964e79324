"""Where a kernel runs the case loop, as tuxrun has devices (a QEMU here, a LAVA
lab's device in lava_target.py, this host): each target takes the
built programs and a run configuration and returns the same report (a
GuestOutcome, parsed from the same framed KTAP). run, validate-patch, bisect and
the benches talk to targets only."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .binaries import Binaries
from .guest import GuestConfig, GuestOutcome, run_guest
from .host import run_host
from .kernels import Kernel
from .lava_target import LavaLab, LavaTarget
from .model import Runner


class Target(Protocol):
    kernel: Kernel

    def run(self, binaries: Binaries, config: GuestConfig, console_log: Path) -> GuestOutcome: ...

    def describe(self, config: GuestConfig) -> Runner:
        """What ran it, for the result."""


@dataclass(frozen=True)
class QemuTarget:
    kernel: Kernel
    initrd: Path  # the programs' initramfs, written once for every kernel of a run
    qemu_version: str = ""
    mode: str = "run"  # "poweroff": the init reports its uptime and powers off at once (benches)

    def run(self, binaries: Binaries, config: GuestConfig, console_log: Path) -> GuestOutcome:
        programs = sorted(binaries.reproducers) if self.mode == "run" else []
        return run_guest(self.kernel, self.initrd, programs, config, console_log, self.mode)

    def describe(self, config: GuestConfig) -> Runner:
        return Runner("qemu", config.repeat, self.qemu_version, config.accel.name, config.accel.reason, config.cpus,
                      config.memory_mb)


@dataclass(frozen=True)
class HostTarget:
    kernel: Kernel  # kernels.host_kernel()

    def run(self, binaries: Binaries, config: GuestConfig, console_log: Path) -> GuestOutcome:
        return run_host(binaries, config, console_log)

    def describe(self, config: GuestConfig) -> Runner:
        return Runner("native", config.repeat)


def target_for(kernel: Kernel, initrd: Path, qemu_version: str = "", lab: LavaLab | None = None) -> Target:
    """The host kernel runs natively; every other kernel is an image to boot, here or as a lab's job."""
    if kernel.image is None:
        return HostTarget(kernel)
    if lab is not None:
        return LavaTarget(kernel, initrd, lab)
    return QemuTarget(kernel, initrd, qemu_version)
