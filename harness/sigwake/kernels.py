"""Which kernels to test, and where their images come from: Debian packages
(downloaded once, image extracted, cached with its sha256), image files, or the
host kernel itself, run natively."""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .atomic import atomic_write
from .debian import SUITE_SOURCES, AptSuite, DebianError, Package, extract_file, extract_image
from .model import Origin
from .progress import Progress


@dataclass(frozen=True)
class DebianQuery:
    """The newest package of `suite` whose name matches `pattern`."""

    suite: str
    pattern: str


# The default set: one kernel before the fix (v6.10) and three after it.
DEFAULT_KERNELS: tuple[DebianQuery, ...] = (
    DebianQuery("bookworm", r"linux-image-6\.1\.0-\d+-amd64"),
    DebianQuery("bookworm-backports", r"linux-image-6\.12\.[\d.]+\+deb12(\.\d+)?-amd64"),
    DebianQuery("trixie", r"linux-image-6\.12\.[\d.]+\+deb13(\.\d+)?-amd64"),
    DebianQuery("sid", r"linux-binary-7\.2\.[\d.]+\+deb14-amd64"),
)


@dataclass(frozen=True)
class Kernel:
    id: str  # names the result file: results/<id>.json
    origin: Origin
    image: Path | None  # None: the host kernel, run natively


class KernelSpecError(ValueError):
    """A --kernel argument that names nothing we can boot."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def host_kernel() -> Kernel:
    release = os.uname().release
    return Kernel(f"host-{release}", Origin("host"), None)


def file_kernel(path: Path) -> Kernel:
    if not path.is_file():
        raise KernelSpecError(f"no kernel image at {path}")
    digest = sha256_of(path)
    name = re.sub(r"[^A-Za-z0-9.+_-]", "_", path.name)
    return Kernel(f"file-{name}-{digest[:8]}", Origin("file", path=str(path.resolve()), sha256=digest), path)


@dataclass(frozen=True)
class KernelCache:
    root: Path  # e.g. ~/.cache/sigwake

    def suite(self, suite: str) -> AptSuite:
        return AptSuite(suite, self.root / "apt" / suite)

    def newest(self, query: DebianQuery, progress: Progress, refresh: bool = False) -> Package:
        apt = self.suite(query.suite)
        apt.update(progress, force=refresh)
        found = apt.packages(query.pattern)
        if not found:
            raise DebianError(f"{query.suite} has no package matching {query.pattern}")
        return found[0]

    def find_package(self, name: str, progress: Progress) -> Package:
        """A package named exactly `name`, in the first suite that has it (or `suite:name`)."""
        suite, _, bare = name.rpartition(":")
        for candidate in [suite] if suite else list(SUITE_SOURCES):
            apt = self.suite(candidate)
            apt.update(progress)
            found = apt.packages(re.escape(bare))
            if found:
                return found[0]
        raise KernelSpecError(f"no Debian package {name!r} in {', '.join(SUITE_SOURCES)}")

    def fetch(self, package: Package, progress: Progress) -> Kernel:
        """The package's kernel image, from the cache or downloaded and extracted once."""
        where = self.root / "kernels" / f"{package.name}_{package.version}"
        image, meta = where / "vmlinuz", where / "origin.json"
        if not (image.is_file() and meta.is_file()):
            where.mkdir(parents=True, exist_ok=True)
            deb = self.suite(package.suite).download(package, self.root / "debs", progress)
            progress.step(f"extracting the kernel image from {deb.name}")
            extract_image(deb, image)
            deb.unlink()
            origin = Origin("debian", package.name, package.version, package.suite, sha256=sha256_of(image))
            atomic_write(meta, json.dumps(origin.to_json(), indent=2) + "\n")
        origin = Origin(**json.loads(meta.read_text()))
        if sha256_of(image) != origin.sha256:
            raise DebianError(f"cached image {image} does not match its recorded sha256; delete {where}")
        kernel_id = re.sub(r"^linux-(image|binary)-", "", package.name)
        return Kernel(kernel_id, origin, image)

    def source_tarball(self, series: str, progress: Progress) -> Path:
        """linux-source-<series>'s tarball (e.g. 6.1, 6.12), from the first suite that has it; cached."""
        package = self.find_package(f"linux-source-{series}", progress)
        where = self.root / "sources" / f"{package.name}_{package.version}"
        tarball = where / f"linux-source-{series}.tar.xz"
        if not tarball.is_file():
            where.mkdir(parents=True, exist_ok=True)
            deb = self.suite(package.suite).download(package, self.root / "debs", progress)
            progress.step(f"extracting {tarball.name} from {deb.name}")
            member = re.compile(rf"^\./usr/src/linux-source-{re.escape(series)}\.tar\.xz$")
            if extract_file(deb, member, tarball) is None:
                raise DebianError(f"{deb.name} holds no usr/src/linux-source-{series}.tar.xz")
            deb.unlink()
        return tarball

    def resolve(self, spec: str, progress: Progress) -> list[Kernel]:
        """`default`, `host`, a path to an image, or a Debian package name."""
        if spec == "default":
            return [self.fetch(self.newest(q, progress), progress) for q in DEFAULT_KERNELS]
        if spec == "host":
            return [host_kernel()]
        if "/" in spec or Path(spec).exists():
            return [file_kernel(Path(spec))]
        if re.fullmatch(r"([a-z-]+:)?linux-[a-z]+-[0-9][A-Za-z0-9.+~-]*", spec):
            return [self.fetch(self.find_package(spec, progress), progress)]
        raise KernelSpecError(f"--kernel {spec!r}: expected default, host, a path to an image, or a Debian package name")
