"""Building the reproducers, the init and the BPF programs for another
architecture: Debian's cross toolchain, and the target's static libraries
(libbpf, libelf, zlib, zstd) downloaded from Debian's archive through a private
apt state and unpacked into a sysroot in the cache (nothing is installed), then
a Meson cross file that points at both."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..core.atomic import atomic_write
from ..core.file_lock import held
from .build import BuildError
from .debian import AptSuite, DebianError
from ..core.progress import Progress

# The target's libraries the programs link statically (libbpf's own dependencies included).
SYSROOT_PACKAGES = ("libbpf-dev", "libelf-dev", "zlib1g-dev", "libzstd-dev")


@dataclass(frozen=True)
class CrossTarget:
    arch: str  # Debian's name: arm64
    triplet: str  # the GNU triplet: aarch64-linux-gnu
    cpu_family: str  # Meson's: aarch64
    compiler_package: str  # Debian's cross C++ compiler

    @property
    def compiler(self) -> str:
        return f"{self.triplet}-g++"


CROSS_TARGETS = {"arm64": CrossTarget("arm64", "aarch64-linux-gnu", "aarch64", "g++-aarch64-linux-gnu")}


def sysroot(target: CrossTarget, cache_root: Path, progress: Progress) -> Path:
    """The target's static libraries and headers, from bookworm (the release the host builds with)."""
    root = cache_root / "sysroot" / target.arch
    stamp = root / ".complete"
    with held(root.with_name(f"{target.arch}.lock"), progress, f"the {target.arch} sysroot"):
        if stamp.exists():
            return root
        apt = AptSuite("bookworm", cache_root / "apt" / f"bookworm-{target.arch}", arch=target.arch)
        debs = cache_root / "sysroot" / f"{target.arch}-debs"
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        try:
            apt.update(progress)
            for name in SYSROOT_PACKAGES:
                found = apt.packages(re.escape(name), prefix=name)
                if not found:
                    raise BuildError(f"bookworm {target.arch} has no {name}")
                deb = apt.download(found[0], debs, progress)
                subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True, capture_output=True, timeout=300)
        except DebianError as e:
            raise BuildError(f"the {target.arch} sysroot: {e}") from e
        stamp.touch()
    return root


def cross_file(target: CrossTarget, cache_root: Path, dest: Path, progress: Progress) -> Path:
    """A Meson cross file for the target; BuildError naming the package when the toolchain is missing."""
    if shutil.which(target.compiler) is None:
        raise BuildError(f"no {target.compiler}: building for {target.arch} needs Debian's {target.compiler_package} "
                         f"(./sigwake setup installs it)")
    root = sysroot(target, cache_root, progress)
    text = f"""# Written by sigwake (harness/sigwake/cross.py) for {target.arch}.
[binaries]
c = '{target.triplet}-gcc'
cpp = '{target.compiler}'
ar = '{target.triplet}-ar'
strip = '{target.triplet}-strip'
pkgconfig = 'pkg-config'

[properties]
sys_root = '{root}'
pkg_config_libdir = ['{root}/usr/lib/{target.triplet}/pkgconfig']

[built-in options]
# The sysroot's headers are system headers: their warnings are not ours.
cpp_args = ['-isystem', '{root}/usr/include']

[host_machine]
system = 'linux'
cpu_family = '{target.cpu_family}'
cpu = '{target.cpu_family}'
endian = 'little'
"""
    dest.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write(dest, text)
