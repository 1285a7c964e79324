"""One kernel under QEMU: boot it with the reproducers in an initramfs, read the
framed KTAP off its console, and turn what happened into a KernelResult. A boot
that panics, hangs or prints no complete report becomes a recorded verdict."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from . import console, ktap, qemu
from .kernels import Kernel
from .results import BootRecord, ReproResult
from .verdicts import Verdict


@dataclass(frozen=True)
class GuestConfig:
    accel: qemu.Accel
    repro_timeout_ms: int = 10_000
    boot_timeout_s: float = 0.0  # 0: derived from the number of reproducers
    memory_mb: int = 512
    cpus: int = 2

    def timeout_for(self, reproducers: int) -> float:
        return self.boot_timeout_s or 60.0 + reproducers * self.repro_timeout_ms / 1000


@dataclass(frozen=True)
class GuestOutcome:
    release: str | None
    boot: BootRecord
    reproducers: list[ReproResult]


def boot_status(outcome: qemu.BootOutcome, report: ktap.GuestReport, timeout_s: float) -> tuple[str, str]:
    """("ok" | "timeout" | "boot-failed", what happened)."""
    panic = console.panic_line(outcome.console)
    if outcome.timed_out:
        return "timeout", f"no power-off within {timeout_s:.0f} s" + (f"; {panic}" if panic else "")
    if panic and not report.done:
        return "boot-failed", panic
    if not report.done:
        why = outcome.stderr.strip().splitlines()[-1] if outcome.stderr.strip() else "no error from QEMU"
        return "boot-failed", f"QEMU exited with {outcome.exit_code} before the init reported: {why}"
    return "ok", ""


def interpret(outcome: qemu.BootOutcome, token: str, names: list[str], timeout_s: float) -> GuestOutcome:
    unframed = console.unframe(outcome.console, token)
    report = ktap.parse_guest(unframed.payloads)
    status, detail = boot_status(outcome, report, timeout_s)
    if unframed.missing:
        detail = "; ".join(filter(None, [detail, f"framed lines lost or torn: {unframed.missing}"]))

    runs = {run.name: run for run in report.runs}
    results = []
    for name in names:
        run = runs.get(name)
        if run is not None and run.result is not None:
            verdict, reason = run.decide()
            took = run.duration_us / 1000 if run.duration_us is not None else None
            results.append(ReproResult(name, verdict, reason, run.document.evidence, took))
        elif status != "ok":
            verdict = Verdict.TIMEOUT if status == "timeout" else Verdict.BOOT_FAILED
            where = "was running when" if run is not None else "never ran:"
            results.append(ReproResult(name, verdict, f"{where} the boot ended: {detail}"))
        else:
            results.append(ReproResult(name, Verdict.ERROR, "the guest did not report this reproducer"))

    boot = BootRecord(status, round(outcome.seconds, 3), report.init_uptime_ms, detail, unframed.rejected,
                      console.tail(outcome.console) if status != "ok" else None)
    return GuestOutcome(report.release, boot, results)


def run_guest(kernel: Kernel, initrd: Path, names: list[str], config: GuestConfig, console_log: Path,
              mode: str = "run") -> GuestOutcome:
    assert kernel.image is not None, "the host kernel runs natively"
    token = secrets.token_hex(8)
    timeout_s = config.timeout_for(len(names))
    request = qemu.BootRequest(
        kernel.image, initrd,
        (f"sigwake.token={token}", f"sigwake.timeout_ms={config.repro_timeout_ms}", f"sigwake.mode={mode}"),
        config.accel, timeout_s, config.memory_mb, config.cpus,
    )
    return interpret(qemu.boot(request, console_log), token, names, timeout_s)
