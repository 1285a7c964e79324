"""The reproducers and the guest init, configured and built by Meson, and what their cases say about
themselves (the catalogue, read from this machine's build)."""

from __future__ import annotations

import dataclasses
import hashlib
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from . import catalogue as catalogue_mod
from . import initramfs
from ..kernels.build import BuildError
from .catalogue import Catalogue
from ..kernels.cross import CROSS_TARGETS, cross_file
from ..core.file_lock import held
from ..core.progress import Progress
from ..core.debian_names import HOST_ARCH


@dataclass(frozen=True)
class Binaries:
    init: Path
    reproducers: dict[str, Path]  # name -> static program
    runner: Path  # sigwake-run: the case loop on this machine's kernel
    catalogue: Catalogue  # every case's facts (of every program, selected or not)
    peers: dict[str, Path] = field(default_factory=dict)  # upstream selftest name -> static program (peers.py)

    def select(self, programs: list[str]) -> Binaries:
        """Only these reproducer programs (all of them for an empty list)."""
        unknown = sorted(set(programs) - set(self.reproducers))
        if unknown:
            raise BuildError(f"no reproducer program {', '.join(unknown)}; there are {', '.join(sorted(self.reproducers))}")
        chosen = {name: path for name, path in self.reproducers.items() if not programs or name in programs}
        return dataclasses.replace(self, reproducers=chosen)

    def with_cases(self, globs: tuple[str, ...]) -> Binaries:
        """Only the programs holding a run `globs` name (run --case; the guest runs only those runs of them)."""
        unmatched = self.catalogue.unmatched(globs, sorted(self.reproducers))
        if unmatched:
            raise ValueError(f"--case {', '.join(unmatched)}: names no case; there are "
                             f"{', '.join(self.catalogue.cases)}")
        return self.select(list(self.catalogue.cases_of(sorted(self.reproducers), globs)))

    def within_cpus(self, cpus: int) -> tuple[Binaries, dict[str, int]]:
        """The programs a boot of `cpus` vCPUs can run, and each left out with the CPUs its cases need (every
        case of it needs more: facts' cpus)."""
        needs = {p: min((c.cpus for c in self.catalogue.cases.values() if c.program == p), default=1)
                 for p in self.reproducers}
        left_out = {p: n for p, n in needs.items() if n > cpus}
        return self.select([p for p in self.reproducers if p not in left_out]), left_out

    def digest(self) -> str:
        """sha256 over every program that runs: a result made by other programs is another result."""
        digest = hashlib.sha256()
        for path in (self.init, self.runner, *(self.reproducers[name] for name in sorted(self.reproducers)),
                     *(self.peers[name] for name in sorted(self.peers))):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
        return digest.hexdigest()

    def initramfs(self, dest: Path) -> Path:
        return initramfs.write(initramfs.guest_entries(self.init, self.reproducers, self.peers), dest)


def _run(argv: list[str], progress: Progress) -> None:
    progress.step(" ".join(argv))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise BuildError(f"{' '.join(argv)} failed:\n{(done.stdout + done.stderr)[-3000:]}")


def build(source: Path, build_dir: Path, progress: Progress, cross_file: Path | None = None,
          catalogue: Catalogue | None = None, selftests: Path | None = None) -> Binaries:
    """The programs for this machine, or (with a Meson cross file, see cross.py, and the catalogue of this
    machine's build: a cross build's programs cannot run here) for another architecture; with `selftests`
    (peers.selftest_sources()), the upstream selftests built from there as peers."""
    # One Meson at a time in a build dir (meson setup takes an existing directory that holds only the lock).
    with held(build_dir / ".sigwake-build.lock", progress, f"the build directory {build_dir}"):
        if not (build_dir / "build.ninja").exists():
            _run(["meson", "setup", str(build_dir), str(source),
                  *(["--cross-file", str(cross_file)] if cross_file else [])], progress)
        if selftests is not None:  # --reconfigure: a build dir set up before the option existed learns it
            _run(["meson", "setup", "--reconfigure", str(build_dir), str(source), f"-Dselftests={selftests}"], progress)
        _run(["meson", "compile", "-C", str(build_dir)], progress)
        return locate(build_dir, catalogue, with_peers=selftests is not None)


def build_dir_for(arch: str, build_dir: Path) -> Path:
    """Where the programs for `arch` are built: this machine's build dir, or a cross build beside it."""
    return build_dir if arch == HOST_ARCH else build_dir.with_name(f"{build_dir.name}-{arch}")


def initramfs_path(arch: str, build_dir: Path, with_peers: bool = False) -> Path:
    """Named for what it holds, so two runs at once (one with the peers) never boot each other's."""
    return build_dir_for(arch, build_dir) / f"sigwake-initramfs{'-peers' if with_peers else ''}.cpio"


def build_for(arch: str, source: Path, build_dir: Path, cache_root: Path, progress: Progress,
              selftests: Path | None = None) -> Binaries:
    """The programs for a kernel of `arch`: this machine's build, or a cross build (build_dir_for); with
    `selftests`, the peers too."""
    if arch == HOST_ARCH:
        return build(source, build_dir, progress, selftests=selftests)
    target = CROSS_TARGETS.get(arch)
    if target is None:
        raise BuildError(f"no cross build for {arch}; sigwake builds for {HOST_ARCH} and {', '.join(CROSS_TARGETS)}")
    native = build(source, build_dir, progress)
    return build(source, build_dir_for(arch, build_dir), progress,
                 cross_file(target, cache_root, cache_root / "sysroot" / f"{arch}.ini", progress), native.catalogue,
                 selftests)


def locate(build_dir: Path, catalogue: Catalogue | None = None, with_peers: bool = False) -> Binaries:
    """The built programs; their catalogue read from them unless given (a cross build's); with `with_peers`,
    the upstream selftests built beside them."""
    repro_dir = build_dir / "repro"
    listing = repro_dir / "reproducers.txt"
    if not listing.exists():
        raise BuildError(f"{listing} is missing: build first (./sigwake build)")
    names = listing.read_text().split()
    programs = {name: repro_dir / name for name in names}
    missing = [str(p) for p in [repro_dir / "sigwake-init", repro_dir / "sigwake-run", *programs.values()]
               if not p.exists()]
    if missing:
        raise BuildError(f"not built: {', '.join(missing)}")
    try:
        facts = catalogue or catalogue_mod.read(programs)
    except catalogue_mod.CatalogueError as e:
        raise BuildError(f"the cases' facts could not be read: {e}") from None
    peers = {}
    if with_peers:
        names = (repro_dir / "peers" / "peers.txt").read_text().split()
        peers = {name: repro_dir / "peers" / f"peer-{name}" for name in names}
        if not peers or any(not p.exists() for p in peers.values()):
            raise BuildError(f"the upstream selftests were not built in {repro_dir / 'peers'}")
    return Binaries(repro_dir / "sigwake-init", programs, repro_dir / "sigwake-run", facts, peers)
