"""What any target hands back from one run of the case loop, before anything is read into it: the console
bytes, how the run ended, and how long it took. A QEMU boot, a run on this host and a LAVA job each make one;
interpret.interpret turns any of them into the kernel's outcome."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Capture:
    console: str
    exit_code: int | None  # None when the run was killed at its deadline, or the target says no exit status
    timed_out: bool
    seconds: float
    stderr: str
    silent_s: float = 0.0  # when killed for silence: how long the console had been quiet
    ended: str = ""  # how the target says the run ended, when that is not a process's exit (a lab's job state)
    target_failed: str = ""  # the target, not the kernel, ended it: QEMU killed or stopped from outside
    started: float | None = None  # when the target started the run (seconds since the epoch): a boot's, where its
    # console's kernel log clock counts from, within the firmware's time; a native run's (whose runs say their
    # own clock); None where no target says
