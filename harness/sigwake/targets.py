"""Where a kernel runs the case loop, as tuxrun has devices: each target takes the
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


class Target(Protocol):
    kernel: Kernel

    def run(self, binaries: Binaries, config: GuestConfig, console_log: Path) -> GuestOutcome: ...

    def describe(self, config: GuestConfig) -> dict[str, object]:
        """What ran it, for the result's `runner`."""


@dataclass(frozen=True)
class QemuTarget:
    kernel: Kernel
    initrd: Path  # the programs' initramfs, written once for every kernel of a run
    qemu_version: str = ""

    def run(self, binaries: Binaries, config: GuestConfig, console_log: Path) -> GuestOutcome:
        return run_guest(self.kernel, self.initrd, sorted(binaries.reproducers), config, console_log)

    def describe(self, config: GuestConfig) -> dict[str, object]:
        return {"mode": "qemu", "qemu": self.qemu_version, "accel": config.accel.name,
                "accel_reason": config.accel.reason, "cpus": config.cpus, "memory_mb": config.memory_mb,
                "repeat": config.repeat}


@dataclass(frozen=True)
class HostTarget:
    kernel: Kernel  # kernels.host_kernel()

    def run(self, binaries: Binaries, config: GuestConfig, console_log: Path) -> GuestOutcome:
        return run_host(binaries, config, console_log)

    def describe(self, config: GuestConfig) -> dict[str, object]:
        return {"mode": "native", "repeat": config.repeat}


def target_for(kernel: Kernel, initrd: Path, qemu_version: str = "") -> Target:
    """The host kernel runs natively; every other kernel is an image to boot."""
    if kernel.image is None:
        return HostTarget(kernel)
    return QemuTarget(kernel, initrd, qemu_version)
