"""Kernel reports that follow the emulator, not the kernel: each seen under one QEMU's TCG and never under
another on the same kernel image (how each was settled: docs/emulator-faults.md). A finding of such a report
says so, so that a distro's QA job knows not to file it against its kernel; it stays a finding (the kernel did
print it), and the same report under any other machine says nothing more."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.model import Runner, Splat


@dataclass(frozen=True)
class EmulatorFault:
    title: str  # the report's title starts so
    machine: str  # the QEMU whose TCG shows it: its version line starts so
    settled: str  # what was seen, in short


KNOWN = (
    EmulatorFault("PANIC: double fault", "QEMU emulator version 7.2.",
                  "under QEMU 7.2.22's TCG Debian's cloud 6.12.95 image double-faulted (impossible EFLAGS, right "
                  "after SLUB's cmpxchg16b on %gs) in 9 of 12 full runs, under QEMU 10.0.2 in none of 9, and its "
                  "generic sibling in none of 4 under 7.2: not the kernel's to file (docs/emulator-faults.md)"),
)


def emulators(splat: Splat, runner: Runner) -> EmulatorFault | None:
    """The known emulator fault this report is, under this runner, if any."""
    if runner.accel != "tcg":
        return None
    return next((f for f in KNOWN if splat.title.startswith(f.title) and runner.machine.startswith(f.machine)), None)


def said(splat: Splat, runner: Runner) -> str:
    """The report's title, with what is known of it when it follows the emulator."""
    fault = emulators(splat, runner)
    return splat.title if fault is None else f"{splat.title} [follows the emulator: {fault.settled}]"
