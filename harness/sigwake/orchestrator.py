"""The run orchestrator: build, fetch the kernels, run each on its target (a QEMU
guest, or this host), record every result as soon as it exists, and regenerate
the matrix."""

from __future__ import annotations

import dataclasses
import datetime
from collections import Counter
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from . import binaries as binaries_mod
from . import protocol, qemu
from .debian import DebianError
from .guest import GuestConfig
from .kernels import KernelCache, KernelSpecError
from .progress import Progress
from .model import KernelResult, Runner
from .render_markdown import write_matrix
from .store import console_log_path, write_result
from .targets import Target, target_for


@dataclass(frozen=True)
class RunConfig:
    source: Path
    build_dir: Path
    cache: Path
    results_dir: Path
    kernel_specs: tuple[str, ...] = ("default", "host")
    accel: str | None = None
    repro_timeout_ms: int = protocol.DEFAULT_TIMEOUT_MS
    boot_timeout_s: float = 0.0
    repeat: int = protocol.DEFAULT_REPEAT
    cpus: int = 1


@dataclass
class RunSummary:
    results: list[KernelResult] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # kernels that could not even be fetched
    warnings: list[str] = field(default_factory=list)  # said at the start and again at the end


def source_commit(source: Path) -> str:
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(source), *args], capture_output=True, text=True, timeout=30)
        return done.stdout.strip() if done.returncode == 0 else ""

    commit = git("rev-parse", "--short=12", "HEAD") or "unknown"
    return commit + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def dirty_warning(commit: str) -> str | None:
    """Results name the commit that measured them; uncommitted changes make that name a lie."""
    if not commit.endswith("-dirty"):
        return None
    return (f"WARNING: sigwake's tree has uncommitted changes ({commit}): these results cannot be traced to a "
            "commit; commit first, then run again before you publish them")


def record_kernel(target: Target, built: binaries_mod.Binaries, guest: GuestConfig, results_dir: Path,
                  commit: str) -> KernelResult:
    """Runs the case loop on one target and makes its result (the caller stores it)."""
    results_dir.mkdir(parents=True, exist_ok=True)
    outcome = target.run(built, guest, console_log_path(results_dir, target.kernel.id))
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    runner = dataclasses.replace(target.describe(guest), skipped_passes=outcome.skipped)
    return KernelResult(target.kernel.id, outcome.release, target.kernel.origin, runner, outcome.boot,
                        outcome.reproducers, now, commit, outcome.paranoid)


def run_kernels(config: RunConfig, progress: Progress) -> RunSummary:
    """The main job: every kernel of the run, each recorded (with the matrix) as soon as it is done."""
    summary = RunSummary()
    built = binaries_mod.build(config.source, config.build_dir, progress)
    initrd = built.initramfs(config.build_dir / "sigwake-initramfs.cpio")
    accel = qemu.choose_accel(config.accel)
    progress.step(f"accelerator: {accel.name} ({accel.reason})")
    guest = GuestConfig(accel, config.repro_timeout_ms, config.boot_timeout_s, cpus=config.cpus, repeat=config.repeat)
    cache = KernelCache(config.cache)
    commit = source_commit(config.source)
    if (warning := dirty_warning(commit)) is not None:
        summary.warnings.append(warning)
        progress.step(warning)
    qemu_version = qemu.qemu_version()

    for spec in config.kernel_specs:
        try:
            kernels = cache.resolve(spec, progress)
        except (DebianError, KernelSpecError, OSError) as e:
            summary.failures.append(f"{spec}: {e}")
            progress.step(f"cannot test {spec}: {e}")
            continue
        for kernel in kernels:
            target = target_for(kernel, initrd, qemu_version)
            progress.step(f"testing {kernel.id} on {type(target).__name__}")
            result = record_kernel(target, built, guest, config.results_dir, commit)
            write_result(config.results_dir, result)
            write_matrix(config.results_dir)
            counts = Counter(str(r.verdict) for r in result.reproducers)
            tally = ", ".join(f"{n} {v}" for v, n in counts.most_common())
            progress.step(f"  {kernel.id}: boot {result.boot.status}; {tally}")
            summary.results.append(result)
    return summary
