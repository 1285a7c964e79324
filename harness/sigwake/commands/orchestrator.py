"""The run orchestrator: build, fetch the kernels, run each on its target (a QEMU
options, or this host), record every result as soon as it exists, and regenerate
the matrix."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from ..programs import binaries as binaries_mod
from ..programs import peers
from ..core import protocol
from ..core.debian_names import HOST_ARCH
from ..kernels.build import BuildError
from ..kernels.debian import DebianError
from ..targets.options import RunOptions
from ..kernels.kernels import DebianQuery, Kernel, KernelCache, KernelSpecError, expand_specs
from ..targets.lava_target import LavaLab
from ..core.progress import Progress
from ..core.model import KernelResult
from ..store.store import console_log_path, load_result, write_result
from ..targets.registry import Place, QemuHere, Target, target_for


@dataclass(frozen=True)
class RunConfig:
    source: Path
    build_dir: Path
    cache: Path
    results_dir: Path
    kernel_specs: tuple[str | DebianQuery, ...] = ("default", "host")
    flavours: tuple[str, ...] = ("generic",)  # of the default set (kernels.FLAVOURS), or ("all",)
    arches: tuple[str, ...] = ("amd64",)  # of the default set
    apt_sources: tuple[str, ...] = ()  # a distro's own repositories, searched first for package names
    accel: str | None = None
    repro_timeout_ms: int = protocol.DEFAULT_TIMEOUT_MS
    boot_timeout_s: float = 0.0
    repeat: int = protocol.DEFAULT_REPEAT
    agree: int = protocol.DEFAULT_AGREE
    cpus: int = 1
    jobs: int = 1  # kernels run at once (each a QEMU, one vCPU by default)
    resume: bool = False  # skip kernels already recorded for the same image and the same programs
    lab: LavaLab | None = None  # boot the images as jobs of this LAVA lab instead of QEMU here
    peer_selftests: bool = False  # run the upstream perf selftests (programs/peers.py) after the cases
    cases: tuple[str, ...] = ()  # globs naming the only cases to run (run --case); (): every case


@dataclass
class RunSummary:
    results: list[KernelResult] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # kernels that could not even be fetched
    warnings: list[str] = field(default_factory=list)  # said at the start and again at the end
    resumed: list[str] = field(default_factory=list)  # kernels whose earlier result was kept (--resume)
    unfinished: list[str] = field(default_factory=list)  # kernels not recorded when the run was interrupted


def _git(source: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(source), *args], capture_output=True, text=True, timeout=30)
    return done.stdout.strip() if done.returncode == 0 else ""


def source_commit(source: Path) -> str:
    commit = _git(source, "rev-parse", "--short=12", "HEAD") or "unknown"
    # results/ is what a run writes, not what measures: regenerating it does not make the tree dirty.
    changed = _git(source, "status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)results")
    return commit + ("-dirty" if changed else "")


def version(source: Path) -> str:
    """--version: git describe (the newest tag and the commits since, or the commit), dirty as source_commit
    says; a copy that is no git checkout has none."""
    described = _git(source, "describe", "--tags", "--always", "--abbrev=12")
    if not described:
        return "unknown (not a git checkout)"
    return described + ("-dirty" if source_commit(source).endswith("-dirty") else "")


def dirty_warning(commit: str) -> str | None:
    """Results name the commit that measured them; uncommitted changes make that name a lie."""
    if not commit.endswith("-dirty"):
        return None
    return (f"WARNING: sigwake's tree has uncommitted changes ({commit}): these results cannot be traced to a "
            "commit; commit first, then run again before you publish them")


def record_kernel(target: Target, built: binaries_mod.Binaries, options: RunOptions, results_dir: Path,
                  commit: str, programs: str) -> KernelResult:
    """Runs the case loop on one target and makes its result (the caller stores it)."""
    results_dir.mkdir(parents=True, exist_ok=True)
    outcome = target.run(built, options, console_log_path(results_dir, target.kernel.id))
    runner = dataclasses.replace(target.describe(options), skipped_passes=outcome.skipped, programs=programs,
                                 cases=list(options.cases))
    return outcome.as_result(target.kernel.id, runner, target.kernel.origin.in_job(outcome.job_id, outcome.job_url),
                             commit)


def recorded_before(results_dir: Path, kernel: Kernel, programs: str, cpus: int,
                    cases: tuple[str, ...] = ()) -> KernelResult | None:
    """The kernel's stored result, if it was made from the same image with the same programs and the same cases
    (run --case's, by name) on as many vCPUs (a QEMU boot's: a case that needs two is another run on one) and
    ran."""
    try:
        earlier = load_result(results_dir / f"{kernel.id}.json")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    same_image = earlier.origin.sha256 == kernel.origin.sha256 and (kernel.image is not None or
                                                                    earlier.release == os.uname().release)
    ran = earlier.boot.status in ("ok", "native")
    same_cpus = earlier.runner.mode != "qemu" or earlier.runner.cpus == cpus
    same_runs = earlier.runner.programs == programs and earlier.runner.cases == list(cases)
    return earlier if same_image and ran and same_cpus and same_runs else None


@dataclass(frozen=True)
class ArchKit:
    """What kernels of one architecture boot with: its programs (and their digest), their initramfs, its run
    options, and what boots them (the place's machine)."""

    built: binaries_mod.Binaries
    initrd: Path
    options: RunOptions
    machine: str
    programs: str  # built.digest(): read once, it hashes every program
    selftests: Path | None = None  # where the peers were built from (programs/peers.py), when they run


def arch_kit(arch: str, config: RunConfig, host: ArchKit, place: Place, progress: Progress) -> ArchKit:
    """The host's kit, or a cross-built one; BuildError (saying what is missing) when it cannot be had."""
    if arch == HOST_ARCH:
        return host
    if (missing := place.missing(arch)) is not None:
        raise BuildError(missing)
    built = binaries_mod.build_for(arch, config.source, config.build_dir, config.cache, progress,
                                   host.selftests)
    if config.cases:
        built = built.with_cases(config.cases)
    initrd = built.initramfs(binaries_mod.initramfs_path(arch, config.build_dir, bool(built.peers)))
    options = place.options_for(host.options, arch, config.accel)
    progress.step(f"{arch}: accelerator {options.accel.name} ({options.accel.reason})")
    return ArchKit(built, initrd, options, place.machine(arch), built.digest(), host.selftests)


def run_kernels(config: RunConfig, progress: Progress) -> RunSummary:
    """The main job: every kernel of the run, each recorded as soon as it is done (it only records: the reports
    are report.write_reports', from what is recorded)."""
    summary = RunSummary()
    config.results_dir.mkdir(parents=True, exist_ok=True)  # its reports are written even when nothing ran
    cache = KernelCache(config.cache, config.apt_sources)
    selftests = peers.selftest_sources(cache, progress) if config.peer_selftests else None
    built = binaries_mod.build(config.source, config.build_dir, progress, selftests=selftests)
    if config.cases:
        built = built.with_cases(config.cases)
    initrd = built.initramfs(binaries_mod.initramfs_path(HOST_ARCH, config.build_dir, bool(built.peers)))
    place: Place = config.lab or QemuHere()
    accel = place.accel(config.accel)
    progress.step(f"accelerator: {accel.name} ({accel.reason})")
    if (problem := place.announce(progress)) is not None:
        summary.failures.append(problem)
    stop = threading.Event()  # set on an interrupt: every running boot kills its QEMU and gives up
    named = built.catalogue.named_runs(sorted(built.reproducers), config.cases) if config.cases else ()
    options = RunOptions(accel, config.repro_timeout_ms, config.boot_timeout_s, cpus=config.cpus, repeat=config.repeat,
                        agree=config.agree, peers=len(built.peers), stop=stop, cases=named)
    commit = source_commit(config.source)
    if (warning := dirty_warning(commit)) is not None:
        summary.warnings.append(warning)
        progress.step(warning)
    host_kit = ArchKit(built, initrd, options, place.machine(HOST_ARCH), built.digest(), selftests)

    resolved: list[Kernel] = []
    for spec in expand_specs(config.kernel_specs, config.flavours, config.arches):
        named = spec.describe() if isinstance(spec, DebianQuery) else spec
        try:
            resolved += cache.resolve(spec, progress)
        except (DebianError, KernelSpecError, OSError) as e:
            summary.failures.append(f"{named}: {e}")
            progress.step(f"cannot test {named}: {e}")
    kits: dict[str, ArchKit] = {}
    kernels: list[Kernel] = []
    for arch in dict.fromkeys(k.arch for k in resolved):
        of_arch = [k for k in resolved if k.arch == arch]
        try:
            kits[arch] = arch_kit(arch, config, host_kit, place, progress)
            kernels += of_arch
        except BuildError as e:  # a missing QEMU or cross toolchain: named, and the other kernels still run
            summary.failures.append(f"{arch} kernels ({', '.join(k.id for k in of_arch)}): {e}")
            progress.step(f"cannot test {arch} kernels: {e}")
    kernels.sort(key=resolved.index)

    pending = []
    for kernel in kernels:
        programs = kits[kernel.arch].programs
        earlier = recorded_before(config.results_dir, kernel, programs, config.cpus, options.cases) if config.resume \
            else None
        if earlier is not None:
            progress.step(f"{kernel.id}: recorded before for this image and these programs, kept (--resume)")
            summary.results.append(earlier)
            summary.resumed.append(kernel.id)
        else:
            pending.append(kernel)

    jobs = place.at_once(config.jobs, options.memory_mb)
    if jobs < config.jobs:
        progress.step(f"{jobs} guests at once, not {config.jobs}: the memory available holds no more")
    recording = threading.Lock()  # results are written by one thread at a time

    def run_one(kernel: Kernel) -> KernelResult:
        kit = kits[kernel.arch]
        target = target_for(kernel, kit.initrd, kit.machine, place)
        progress.step(f"testing {kernel.id} on {type(target).__name__}")
        result = record_kernel(target, kit.built, kit.options, config.results_dir, commit, kit.programs)
        with recording:
            write_result(config.results_dir, result)
        counts = Counter(str(r.verdict) for r in result.reproducers)
        tally = ", ".join(f"{n} {v}" for v, n in counts.most_common())
        progress.step(f"  {kernel.id}: boot {result.boot.status}; {tally}")
        return result

    done: dict[str, KernelResult] = {}
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="kernel")
    futures = {pool.submit(run_one, kernel): kernel for kernel in pending}
    try:
        for future in as_completed(futures):
            done[futures[future].id] = future.result()
    except KeyboardInterrupt:
        # Ctrl-C or SIGTERM: every running boot kills its QEMU; what finished is recorded, what did
        # not is named.
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        for future, kernel in futures.items():
            if future.done() and not future.cancelled() and future.exception() is None:
                done[kernel.id] = future.result()
        summary.unfinished = [k.id for k in pending if k.id not in done]
        summary.results += [done[k.id] for k in pending if k.id in done]
        raise Interrupted(summary) from None
    pool.shutdown()
    summary.results += [done[k.id] for k in pending]  # in the order asked, whatever the order of finishing
    return summary


class Interrupted(Exception):
    """The run was interrupted; `summary` says what was recorded and what was not."""

    def __init__(self, summary: RunSummary) -> None:
        super().__init__("interrupted")
        self.summary = summary
