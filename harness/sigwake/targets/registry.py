"""Where a kernel runs the case loop, as tuxrun has devices (a QEMU here, a LAVA
lab's device in lava_target.py, this host): each target takes the
built programs and a run configuration and returns the same report (a
KernelOutcome, parsed from the same framed KTAP). run, validate-patch, bisect and
the benches talk to targets only. Where a run's images boot is a Place (QEMU on
this machine here, a LAVA lab in lava_target.py): each says which accelerator,
how many at once and what it boots with, so the orchestrator asks and never
branches on which one it is."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from . import qemu
from ..programs.binaries import Binaries
from ..core.debian_names import HOST_ARCH
from .options import RunOptions
from .interpret import KernelOutcome
from .qemu_run import run_qemu
from .host import run_host
from ..kernels.kernels import Kernel
from ..core.model import Runner
from ..core.progress import Progress


class Target(Protocol):
    kernel: Kernel

    def run(self, binaries: Binaries, config: RunOptions, console_log: Path) -> KernelOutcome: ...

    def describe(self, config: RunOptions) -> Runner:
        """What ran it, for the result."""


@dataclass(frozen=True)
class QemuTarget:
    kernel: Kernel
    initrd: Path  # the programs' initramfs, written once for every kernel of a run
    machine: str = ""  # what boots it: QEMU and its version
    mode: str = "run"  # "poweroff": the init reports its uptime and powers off at once (benches)

    def run(self, binaries: Binaries, config: RunOptions, console_log: Path) -> KernelOutcome:
        programs = sorted(binaries.reproducers) if self.mode == "run" else []
        return run_qemu(self.kernel, self.initrd, programs, config, console_log, self.mode,
                        binaries.catalogue.cases_of(programs, config.cases))

    def describe(self, config: RunOptions) -> Runner:
        return Runner("qemu", config.repeat, self.machine, config.accel.name, config.accel.reason, config.cpus,
                      config.memory_mb)


@dataclass(frozen=True)
class HostTarget:
    kernel: Kernel  # kernels.host_kernel()

    def run(self, binaries: Binaries, config: RunOptions, console_log: Path) -> KernelOutcome:
        return run_host(binaries, config, console_log)

    def describe(self, config: RunOptions) -> Runner:
        return Runner("native", config.repeat, cpus=len(os.sched_getaffinity(0)))


class Place(Protocol):
    """Where a run's images boot."""

    def accel(self, option: str | None) -> qemu.Accel:
        """The accelerator for kernels of this machine's architecture (`option`: --accel)."""

    def missing(self, arch: str) -> str | None:
        """Why kernels of `arch` cannot boot here, or None."""

    def machine(self, arch: str) -> str:
        """What boots them, for the result ("" when it cannot be known from here)."""

    def options_for(self, options: RunOptions, arch: str, option: str | None) -> RunOptions:
        """The run options for kernels of `arch`, from those of this machine's architecture."""

    def at_once(self, jobs: int, memory_mb: int) -> int:
        """How many kernels may boot at once, of the `jobs` asked for."""

    def announce(self, progress: Progress) -> str | None:
        """Says what it is; a problem that every kernel will meet (then each is still recorded), or None."""

    def target(self, kernel: Kernel, initrd: Path, machine: str) -> Target: ...


# A guest of another architecture under TCG, against one of the host's: measured here, an arm64 Debian
# kernel reached /init at 15.5 s of uptime where amd64's does at about 2 s; its deadlines stretch by this:
# the boot's, the silence watchdog's and each reproducer run's (group_read_size_limit takes 1.5-2.2 s on
# arm64 6.1 against 0.1 s on amd64, and under a loaded CI host passed 10 s).
FOREIGN_TCG_SLOWDOWN = 4.0


def slowdown_for(arch: str) -> float:
    """How much longer every deadline of a guest of `arch` is here: 1 for the host's own."""
    return 1.0 if arch == HOST_ARCH else FOREIGN_TCG_SLOWDOWN


def options_for_arch(options: RunOptions, arch: str, accel_option: str | None) -> RunOptions:
    """The run options for kernels of `arch` booted here: the host's own, or TCG with stretched deadlines."""
    if arch == HOST_ARCH:
        return options
    slowdown = slowdown_for(arch)
    return dataclasses.replace(options, accel=qemu.choose_accel(accel_option, arch=arch), slowdown=slowdown,
                               repro_timeout_ms=round(options.repro_timeout_ms * slowdown / options.slowdown))


def guests_that_fit(jobs: int, memory_mb: int) -> int:
    """As many guests as asked, but no more than the memory available now holds (with room to spare)."""
    available_kb = next((int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                         if line.startswith("MemAvailable:")), 0)
    return max(1, min(jobs, available_kb // 1024 // (memory_mb + 256)))


@dataclass(frozen=True)
class QemuHere:
    """QEMU on this machine: KVM where the evidence says it works, each architecture's own QEMU, as many guests
    as the memory holds."""

    def accel(self, option: str | None) -> qemu.Accel:
        return qemu.choose_accel(option)

    def missing(self, arch: str) -> str | None:
        return qemu.missing_qemu(arch)

    def machine(self, arch: str) -> str:
        return qemu.qemu_version(arch)

    def options_for(self, options: RunOptions, arch: str, option: str | None) -> RunOptions:
        return options_for_arch(options, arch, option)

    def at_once(self, jobs: int, memory_mb: int) -> int:
        return guests_that_fit(jobs, memory_mb)

    def announce(self, progress: Progress) -> str | None:
        return None

    def target(self, kernel: Kernel, initrd: Path, machine: str) -> Target:
        return QemuTarget(kernel, initrd, machine)


def target_for(kernel: Kernel, initrd: Path, machine: str = "", place: Place | None = None) -> Target:
    """The host kernel runs natively; every other kernel is an image to boot where the run boots them."""
    if kernel.image is None:
        return HostTarget(kernel)
    return (place or QemuHere()).target(kernel, initrd, machine)
