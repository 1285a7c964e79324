"""Where a kernel is booted: QEMU with the accelerator chosen by evidence, no
network, no shared filesystem, and a hard timeout on every boot."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .capture import Capture
from ..core.debian_names import HOST_ARCH



@dataclass(frozen=True)
class Machine:
    """How QEMU runs a kernel of one architecture (Debian's name for it)."""

    arch: str
    binary: str
    package: str  # Debian's package of the binary
    tcg_machine: tuple[str, ...]  # board and CPU under TCG (KVM: the host's CPU)
    kvm_machine: tuple[str, ...]
    console: str
    earlycon: str  # the same port before its driver loads: a kernel that dies that early still prints its banner
    extra_append: tuple[str, ...] = ()


MACHINES = {
    "amd64": Machine("amd64", "qemu-system-x86_64", "qemu-system-x86", (), ("-cpu", "host"), "ttyS0",
                     "uart8250,io,0x3f8,115200", ("i8042.noaux=1",)),  # no PS/2 mouse probing
    "arm64": Machine("arm64", "qemu-system-aarch64", "qemu-system-arm", ("-machine", "virt", "-cpu", "max"),
                     ("-machine", "virt", "-cpu", "host"), "ttyAMA0", "pl011,0x9000000"),
}
KVM_GET_API_VERSION = 0xAE00
KVM_CREATE_VM = 0xAE01
KVM_API_VERSION = 12

def base_append(arch: str = "amd64") -> tuple[str, ...]:
    """Kernel arguments every boot gets: serial console, from the first line (earlycon: a kernel that panics
    before its console driver loads is seen to have started, a crash rather than nothing), panic ends the
    boot at once (with -no-reboot QEMU then exits), little printk noise: notices and worse reach the console
    (the banner is a notice, a report at boot a warning or worse), info and debug do not."""
    machine = MACHINES[arch]
    return (f"earlycon={machine.earlycon}", f"console={machine.console}", "panic=-1", "loglevel=6",
            *machine.extra_append, "rdinit=/init")


@dataclass(frozen=True)
class Accel:
    name: str  # "kvm" or "tcg"
    reason: str


def probe_kvm(cpuinfo: str, device: Path = Path("/dev/kvm")) -> str | None:
    """None when KVM can run a guest here, else why not."""
    flags = {w for line in cpuinfo.splitlines() if line.startswith("flags") for w in line.split(":", 1)[1].split()}
    if not flags & {"vmx", "svm"}:
        return "the CPU flags show neither vmx nor svm (a nested or paravirtual host)"
    try:
        fd = os.open(device, os.O_RDWR | os.O_CLOEXEC)
    except OSError as e:
        return f"{device} cannot be opened: {e.strerror}"
    try:
        if fcntl.ioctl(fd, KVM_GET_API_VERSION) != KVM_API_VERSION:
            return f"{device} speaks an unexpected KVM API"
        vm = fcntl.ioctl(fd, KVM_CREATE_VM, 0)
        os.close(vm)
    except OSError as e:
        return f"{device} cannot create a VM: {e.strerror}"
    finally:
        os.close(fd)
    return None


def choose_accel(override: str | None, cpuinfo: str | None = None, arch: str = HOST_ARCH) -> Accel:
    if arch != HOST_ARCH:
        if override == "kvm":
            raise ValueError(f"--accel kvm: an {arch} guest cannot use KVM on this {HOST_ARCH} host")
        return Accel("tcg", f"an {arch} guest on an {HOST_ARCH} host: KVM runs only the host's own architecture")
    if override in ("kvm", "tcg"):
        return Accel(override, "chosen with --accel")
    if override not in (None, "auto"):
        raise ValueError(f"--accel must be kvm, tcg or auto, not {override!r}")
    text = cpuinfo if cpuinfo is not None else Path("/proc/cpuinfo").read_text()
    why_not = probe_kvm(text)
    return Accel("tcg", f"KVM unusable: {why_not}") if why_not else Accel("kvm", "vmx/svm present and /dev/kvm creates VMs")


def missing_qemu(arch: str) -> str | None:
    """None when this machine has QEMU for the architecture, else what to install."""
    machine = MACHINES.get(arch)
    if machine is None:
        return f"sigwake knows no QEMU machine for {arch} (it boots {', '.join(MACHINES)})"
    if shutil.which(machine.binary) is None:
        return f"no {machine.binary} here: install Debian's {machine.package} (./sigwake setup does)"
    return None


def qemu_version(arch: str = "amd64") -> str:
    done = subprocess.run([MACHINES[arch].binary, "--version"], capture_output=True, text=True, timeout=30)
    return done.stdout.splitlines()[0] if done.returncode == 0 and done.stdout else "unknown"


@dataclass(frozen=True)
class BootRequest:
    image: Path
    initrd: Path
    append: tuple[str, ...]  # beyond base_append(arch)
    accel: Accel
    timeout_s: float  # the whole boot
    memory_mb: int = 512
    cpus: int = 1
    silence_s: float = 0.0  # kill QEMU once its console has been silent this long (0: never)
    stop: threading.Event | None = field(default=None, compare=False)  # set: kill QEMU and raise Stopped
    arch: str = "amd64"


def command(request: BootRequest, console_log: Path) -> list[str]:
    machine = MACHINES[request.arch]
    accel = (["-accel", "kvm", *machine.kvm_machine] if request.accel.name == "kvm" else
             ["-accel", "tcg", *machine.tcg_machine])
    return [
        *DIE_WITH_US, machine.binary, *accel,
        "-m", str(request.memory_mb), "-smp", str(request.cpus),
        "-nic", "none", "-no-reboot", "-display", "none", "-monitor", "none",
        "-serial", f"file:{console_log}",
        "-kernel", str(request.image), "-initrd", str(request.initrd),
        "-append", " ".join((*base_append(request.arch), *request.append)),
    ]


class Stopped(Exception):
    """The run was interrupted while this boot went on; its QEMU was killed."""


WATCH_EVERY_S = 1.0  # how often the silence watchdog looks at the console's size

# QEMU dies with the harness, however the harness ends (a CI runner's SIGTERM, a crash): the
# kernel sends it SIGKILL when the thread that started it is gone.
DIE_WITH_US = ("setpriv", "--pdeathsig", "KILL", "--")


def ended_from_outside(returncode: int, stderr: str) -> str:
    """Why QEMU's end was none of the guest's doing, or "": SIGKILL (sigwake kills only at a deadline, and then
    says so; the host's OOM killer kills so), or QEMU's own word that a signal ended it (SIGTERM, SIGINT,
    SIGHUP: it exits 0 and says "terminating on signal"). A QEMU that aborts or faults may have been driven
    there by the guest: that stays the kernel's."""
    said = next((line.strip() for line in stderr.splitlines() if "terminating on signal" in line), "")
    if said:
        return f"QEMU was stopped from outside: {said}"
    if returncode == -signal.SIGKILL:
        return "QEMU was killed by SIGKILL, not by sigwake (the host's OOM killer, a user)"
    return ""


def boot(request: BootRequest, console_log: Path) -> Capture:
    """Boots once; returns when QEMU exits, or once it is killed at the timeout or for a console
    silent for request.silence_s (a hung kernel, while a slow but working one keeps printing)."""
    console_log.unlink(missing_ok=True)
    argv = command(request, console_log)
    started, start = time.time(), time.monotonic()
    last_size, last_growth, silent_s = -1, start, 0.0
    # Its own session: a terminal's Ctrl-C goes to the harness's process group, not to QEMU, so a boot is
    # only ever cut by the harness, which then records nothing of it (a cut boot is no kernel's result).
    with subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, start_new_session=True) as proc:
        timed_out = True
        try:
            while (now := time.monotonic()) - start < request.timeout_s:
                try:
                    proc.wait(timeout=min(WATCH_EVERY_S, request.timeout_s - (now - start)))
                    timed_out = False
                    break
                except subprocess.TimeoutExpired:
                    if request.stop is not None and request.stop.is_set():
                        raise Stopped(f"stopped while booting {request.image}")
                    size = console_log.stat().st_size if console_log.exists() else 0
                    if size != last_size:
                        last_size, last_growth = size, time.monotonic()
                    elif request.silence_s and time.monotonic() - last_growth > request.silence_s:
                        silent_s = time.monotonic() - last_growth
                        break
        except BaseException:  # Ctrl-C, SIGTERM turned into an exception: QEMU goes first
            proc.kill()
            proc.wait()
            raise
        if timed_out:
            proc.kill()
        _, stderr = proc.communicate()
    seconds = time.monotonic() - start
    console = console_log.read_text(errors="replace") if console_log.exists() else ""
    return Capture(console, None if timed_out else proc.returncode, timed_out, seconds, stderr, round(silent_s, 1),
                   target_failed="" if timed_out else ended_from_outside(proc.returncode, stderr), started=started)
