"""How a kernel runs the case loop, whatever the target: the privilege passes, repeats, deadlines, and for a
virtual machine its accelerator, memory and vCPUs."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ..core import protocol
from . import qemu


# The privilege passes a target can run: root, then uid 65534 under each perf_event_paranoid.
PRIVILEGES: tuple[str, ...] = protocol.PASSES


@dataclass(frozen=True)
class RunOptions:
    accel: qemu.Accel
    repro_timeout_ms: int = protocol.DEFAULT_TIMEOUT_MS
    boot_timeout_s: float = 0.0  # 0: derived from how many programs run
    quiet_limit_s: float = 0.0  # 0: derived from the reproducers' deadline (see silence_s)
    memory_mb: int = 512
    cpus: int = 1  # one vCPU: under TCG, two raced on live kernel text patching (docs/how-a-boot-works.md)
    repeat: int = protocol.DEFAULT_REPEAT  # the most runs of each case per pass
    agree: int = protocol.DEFAULT_AGREE  # a case whose first `agree` runs agree stops there (>= repeat: all run)
    privileges: tuple[str, ...] = PRIVILEGES
    cases: tuple[str, ...] = ()  # the only runs to make, by name (run --case's globs: Catalogue.named_runs); (): all
    stop: threading.Event | None = field(default=None, compare=False)  # set when the run is interrupted
    slowdown: float = 1.0  # how much slower than a native-architecture guest (another architecture under TCG)
    peers: int = 0  # upstream selftest programs the guest runs after the cases (each up to its own deadline)
    fresh_boots: bool = True  # after a crash or hang under a run, the runs after it go on in fresh boots

    def timeout_for(self, programs: int) -> float:
        """A cap for the whole boot: every program run may take two wakeup budgets per case it holds
        (a broken kernel makes cases wait them out); the silence watchdog catches a hung kernel long
        before this."""
        runs = programs * self.repeat * len(self.privileges)
        peers_s = self.peers * protocol.DEFAULT_PEER_TIMEOUT_MS / 1000
        return self.boot_timeout_s or (60.0 + 8.0 * runs) * self.slowdown + self.repro_timeout_ms / 1000 + peers_s

    @property
    def silence_s(self) -> float:
        """Longer than any stretch a working guest spends without a console line: the kernel's boot
        before /init, or one reproducer (or upstream selftest) run up to its deadline."""
        longest_ms = max(self.repro_timeout_ms, protocol.DEFAULT_PEER_TIMEOUT_MS if self.peers else 0)
        return self.quiet_limit_s or 30.0 * self.slowdown + longest_ms / 1000
