"""One kernel under QEMU: boot it with the reproducers in an initramfs, read the
framed KTAP off its console, and turn what happened into a KernelResult. A boot
that panics, hangs or prints no complete report becomes a recorded verdict."""

from __future__ import annotations

import secrets
import threading
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import console, initramfs, ktap, protocol, qemu, splats
from .attribution import attribute
from .kernels import Kernel
from .repeats import CaseRun, combine
from .model import BootRecord, ReproResult, Splat
from .verdicts import Verdict


# The privilege passes a target can run: root, then uid 65534 under each perf_event_paranoid.
PRIVILEGES: tuple[str, ...] = protocol.PASSES


@dataclass(frozen=True)
class GuestConfig:
    accel: qemu.Accel
    repro_timeout_ms: int = protocol.DEFAULT_TIMEOUT_MS
    boot_timeout_s: float = 0.0  # 0: derived from how many programs run
    quiet_limit_s: float = 0.0  # 0: derived from the reproducers' deadline (see silence_s)
    memory_mb: int = 512
    cpus: int = 1  # one vCPU: under TCG, two raced on live kernel text patching (see README)
    repeat: int = protocol.DEFAULT_REPEAT
    privileges: tuple[str, ...] = PRIVILEGES
    stop: threading.Event | None = field(default=None, compare=False)  # set when the run is interrupted
    slowdown: float = 1.0  # how much slower than a native-architecture guest (another architecture under TCG)

    def timeout_for(self, programs: int) -> float:
        """A cap for the whole boot: every program run may take two wakeup budgets per case it holds
        (a broken kernel makes cases wait them out); the silence watchdog catches a hung kernel long
        before this."""
        runs = programs * self.repeat * len(self.privileges)
        return self.boot_timeout_s or (60.0 + 8.0 * runs) * self.slowdown + self.repro_timeout_ms / 1000

    @property
    def silence_s(self) -> float:
        """Longer than any stretch a working guest spends without a console line: the kernel's boot
        before /init, or one reproducer run up to its deadline."""
        return self.quiet_limit_s or 30.0 * self.slowdown + self.repro_timeout_ms / 1000


@dataclass(frozen=True)
class GuestOutcome:
    release: str | None
    boot: BootRecord
    reproducers: list[ReproResult]
    paranoid: dict[str, str]  # privilege pass -> the perf_event_paranoid it ran under
    skipped: dict[str, str] = field(default_factory=dict)  # privilege pass -> why the target did not run it
    job_id: str = ""  # the lab's job that ran it (LAVA), else empty
    job_url: str = ""
    splats: list[Splat] = field(default_factory=list)  # kernel reports on the console, each with its case


def boot_status(outcome: qemu.BootOutcome, report: ktap.GuestReport, timeout_s: float) -> tuple[str, str]:
    """("ok" | "timeout" | "boot-failed", what happened)."""
    panic = console.panic_line(outcome.console)
    if outcome.timed_out and outcome.silent_s:
        return "timeout", f"the console was silent for {outcome.silent_s:.0f} s" + (f"; {panic}" if panic else "")
    if outcome.timed_out:
        return "timeout", (outcome.ended or f"no power-off within {timeout_s:.0f} s") + (f"; {panic}" if panic else "")
    if panic and not report.done:
        return "boot-failed", panic + (f"; {outcome.ended}" if outcome.ended else "")
    if not report.done and outcome.ended:
        return "boot-failed", outcome.ended
    if not report.done:
        why = outcome.stderr.strip().splitlines()[-1] if outcome.stderr.strip() else "no error from QEMU"
        return "boot-failed", f"QEMU exited with {outcome.exit_code} before the init reported: {why}"
    return "ok", ""


def interpret(outcome: qemu.BootOutcome, token: str, programs: list[str], privileges: tuple[str, ...],
              timeout_s: float) -> GuestOutcome:
    unframed = console.unframe(outcome.console, token)
    report = ktap.parse_guest(unframed.payloads, unframed.lines)
    status, detail = boot_status(outcome, report, timeout_s)
    if unframed.missing:
        detail = "; ".join(filter(None, [detail, f"framed lines lost or torn: {unframed.missing}"]))
    cut_off = Verdict.TIMEOUT if status == "timeout" else Verdict.BOOT_FAILED

    runs: list[CaseRun] = []
    for run in report.runs:
        took = run.duration_us / 1000 if run.duration_us is not None else None
        problem = run.problem()
        if problem is not None and run.result is None and status != "ok":
            runs.append(CaseRun(run.case or run.program, run.privilege, cut_off,
                                f"was running when the boot ended: {detail}", {}))
        elif problem is not None:
            runs.append(CaseRun(run.case or run.program, run.privilege, problem[0], problem[1], {}, took))
        else:
            judged = run.document.judged(run.case or run.program, run.ended(), run.exit_code, run.case is not None)
            runs += [CaseRun(case, run.privilege, verdict, reason, evidence, took, run.kernel_path)
                     for case, verdict, reason, evidence in judged]
    ran = {(run.privilege, run.program) for run in report.runs}
    for privilege in (p for p in privileges if p not in report.skipped):
        for program in programs:
            if (privilege, program) in ran:
                continue
            if status != "ok":
                runs.append(CaseRun(program, privilege, cut_off, f"never ran: the boot ended: {detail}", {}))
            else:
                runs.append(CaseRun(program, privilege, Verdict.ERROR, "the guest did not report this reproducer", {}))

    pass_seconds: dict[str, float] = {}
    for run in report.runs:
        pass_seconds[run.privilege] = pass_seconds.get(run.privilege, 0.0) + (run.duration_us or 0) / 1e6
    boot = BootRecord(status, round(outcome.seconds, 3), report.init_uptime_ms, detail, unframed.rejected,
                      console.tail(outcome.console) if status != "ok" else None,
                      {k: round(v, 3) for k, v in pass_seconds.items()}, report.warnings)
    return GuestOutcome(report.release, boot, combine(runs), report.paranoid, report.skipped,
                        splats=attribute(splats.find(outcome.console), report.runs))


def boot_arguments(config: GuestConfig, mode: str = "run") -> tuple[str, ...]:
    """The kernel command line beyond qemu.base_append(): what the init reads (one rule for every target)."""
    keys = protocol.KEYS
    return (f"{keys['timeout_ms']}={config.repro_timeout_ms}", f"{keys['mode']}={mode}",
            f"{keys['repeat']}={config.repeat}", f"{keys['passes']}={','.join(config.privileges)}")


def write_boot_initrd(initrd: Path, token: str, out_path: Path) -> None:
    """The shared initramfs plus this boot's token, root-only, never on the command line (see
    repro/guest/init.cc): every boot, local or in a lab, gets its own token."""
    with initrd.open("rb") as shared, out_path.open("wb") as out:
        shutil.copyfileobj(shared, out)
        out.write(initramfs.token_archive(token))


def run_guest(kernel: Kernel, initrd: Path, programs: list[str], config: GuestConfig, console_log: Path,
              mode: str = "run") -> GuestOutcome:
    assert kernel.image is not None, "the host kernel runs natively"
    token = secrets.token_hex(8)
    timeout_s = config.timeout_for(len(programs))
    privileges = config.privileges if mode == "run" else ()
    with tempfile.TemporaryDirectory(prefix="sigwake-boot-") as tmp:
        boot_initrd = Path(tmp) / "initrd.cpio"
        write_boot_initrd(initrd, token, boot_initrd)
        request = qemu.BootRequest(kernel.image, boot_initrd, boot_arguments(config, mode), config.accel, timeout_s,
                                   config.memory_mb, config.cpus, config.silence_s, config.stop, kernel.arch)
        outcome = qemu.boot(request, console_log)
    return interpret(outcome, token, programs, privileges, timeout_s)
