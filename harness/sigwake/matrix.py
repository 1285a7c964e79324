"""The main job: build, fetch the kernels, test each (QEMU, or natively for the
host), record every result as soon as it exists, and regenerate the matrix."""

from __future__ import annotations

import datetime
from collections import Counter
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from . import binaries as binaries_mod
from . import native, qemu
from .debian import DebianError
from .guest import GuestConfig, run_guest
from .kernels import Kernel, KernelCache, KernelSpecError
from .progress import Progress
from .results import BootRecord, KernelResult, console_log_path, write_matrix, write_result


@dataclass(frozen=True)
class RunConfig:
    source: Path
    build_dir: Path
    cache: Path
    results_dir: Path
    kernel_specs: tuple[str, ...] = ("default", "host")
    accel: str | None = None
    repro_timeout_ms: int = 10_000
    boot_timeout_s: float = 0.0
    repeat: int = 5
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


def test_kernel(kernel: Kernel, built: binaries_mod.Binaries, initrd: Path, guest: GuestConfig,
                results_dir: Path, commit: str, qemu_version: str) -> KernelResult:
    programs = sorted(built.reproducers)
    paranoid: dict[str, str] = {}
    if kernel.native:
        tracer = built.kernel_path if os.geteuid() == 0 else None  # BPF needs root
        repros = native.run_all(built, guest.repro_timeout_ms / 1000, guest.repeat, tracer)
        release: str | None = os.uname().release
        runner: dict[str, object] = {"mode": "native", "repeat": guest.repeat}
        boot = BootRecord("native")
    else:
        results_dir.mkdir(parents=True, exist_ok=True)
        outcome = run_guest(kernel, initrd, programs, guest, console_log_path(results_dir, kernel.id))
        release, boot, repros, paranoid = outcome.release, outcome.boot, outcome.reproducers, outcome.paranoid
        runner = {"mode": "qemu", "qemu": qemu_version, "accel": guest.accel.name,
                  "accel_reason": guest.accel.reason, "cpus": guest.cpus, "memory_mb": guest.memory_mb,
                  "repeat": guest.repeat}
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    return KernelResult(kernel.id, release, kernel.origin.to_json(), runner, boot, repros, now, commit, paranoid)


def run_matrix(config: RunConfig, progress: Progress) -> RunSummary:
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
            how = "natively" if kernel.native else f"under QEMU ({accel.name})"
            progress.step(f"testing {kernel.id} {how}")
            result = test_kernel(kernel, built, initrd, guest, config.results_dir, commit, qemu_version)
            write_result(config.results_dir, result)
            write_matrix(config.results_dir)
            counts = Counter(str(r.verdict) for r in result.reproducers)
            tally = ", ".join(f"{n} {v}" for v, n in counts.most_common())
            progress.step(f"  {kernel.id}: boot {result.boot.status}; {tally}")
            summary.results.append(result)
    return summary
