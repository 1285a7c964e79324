"""Which kernels to test, and where their images come from: Debian packages
(downloaded once, or a local .deb; image extracted, cached with its sha256),
image files, or the host kernel itself, run natively."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from ..core.atomic import atomic_write
from ..core.file_lock import held
from ..core.debian_names import BOOTABLE_ARCHES, FLAVOURS, SERIES, as_glob, ending
from .debian import SUITE_SOURCES, AptSuite, DebianError, Package, apt_source, extract_file, extract_image
from ..core.model import LOCAL, Origin
from ..core.progress import Progress
from ..core.debian_names import HOST_ARCH


@dataclass(frozen=True)
class DebianQuery:
    """The newest package of `suite` whose name matches `pattern`."""

    suite: str
    pattern: str
    arch: str = "amd64"
    flavour: str = "generic"

    def describe(self) -> str:
        return f"{self.suite} {self.arch} {self.flavour}"


def default_kernels(flavour: str = "generic", arch: str = "amd64") -> tuple[DebianQuery, ...]:
    if arch not in FLAVOURS:
        raise KernelSpecError(f"architecture {arch!r}: sigwake knows {', '.join(FLAVOURS)}")
    if flavour not in FLAVOURS[arch]:
        raise KernelSpecError(f"flavour {flavour!r}: Debian's {arch} kernels come as {', '.join(FLAVOURS[arch])}")
    suffix = re.escape(ending(arch, flavour))
    return tuple(DebianQuery(suite, prefix + suffix, arch, flavour) for suite, prefix in SERIES)


def flavours_of(option: str, arches: tuple[str, ...] = ("amd64",)) -> tuple[str, ...]:
    """--flavour: a comma list (each the flavour of one of the architectures), or `all`."""
    if option == "all":
        return ("all",)
    names = tuple(f for f in option.split(",") if f)
    for flavour in names:
        if not any(flavour in FLAVOURS.get(arch, ()) for arch in arches):
            default_kernels(flavour, arches[0])  # raises, naming the flavours there are
    return names


def arches_of(option: str) -> tuple[str, ...]:
    """--arch: a comma list of architectures sigwake boots."""
    arches = tuple(a for a in option.split(",") if a)
    unknown = [a for a in arches if a not in BOOTABLE_ARCHES]
    if unknown or not arches:
        raise KernelSpecError(f"--arch {option}: sigwake boots {', '.join(BOOTABLE_ARCHES)} kernels")
    return arches


DEFAULT_KERNELS = default_kernels()


@dataclass(frozen=True)
class Kernel:
    id: str  # names the result file: results/<id>.json
    origin: Origin
    image: Path | None  # None: the host kernel, run natively
    arch: str = "amd64"  # Debian's name of the architecture it runs on


class KernelSpecError(ValueError):
    """A --kernel argument that names nothing we can boot."""


def expand_specs(specs: tuple[str | DebianQuery, ...], flavours: tuple[str, ...],
                 arches: tuple[str, ...] = ("amd64",)) -> list[str | DebianQuery]:
    """`default` becomes its queries, one per architecture, flavour and suite, so that a flavour a suite
    lacks is named alone and the rest still runs (`all` flavours: each architecture's own)."""
    expanded: list[str | DebianQuery] = []
    for spec in specs:
        if spec != "default":
            expanded.append(spec)
            continue
        for arch in arches:
            chosen = FLAVOURS[arch] if flavours == ("all",) else [f for f in flavours if f in FLAVOURS[arch]]
            expanded += [q for f in chosen for q in default_kernels(f, arch)]
    return expanded


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def host_kernel() -> Kernel:
    release = os.uname().release
    return Kernel(f"host-{release}", Origin("host"), None, HOST_ARCH)


def file_kernel(path: Path) -> Kernel:
    """A kernel image file; KernelSpecError, before anything boots, for a file that is none."""
    if not path.is_file():
        raise KernelSpecError(f"no kernel image at {path}")
    with path.open("rb") as image:
        head = image.read(1024)
    if image_format(head) is None:
        raise KernelSpecError(f"{path} is not a kernel image (no bzImage, arm64 Image, ELF vmlinux, gzip or EFI "
                              "zboot header): not booted")
    digest = sha256_of(path)
    name = re.sub(r"[^A-Za-z0-9.+_-]", "_", path.name)
    origin = Origin("file", path=str(path.resolve()), sha256=digest, **built_from(path))
    return Kernel(f"file-{name}-{digest[:8]}", origin, path, "arm64" if head[56:60] == ARM64_IMAGE_MAGIC else "amd64")


def built_from(image: Path) -> dict[str, str]:
    """For an image sigwake built from source (its build's meta.json beside it): the tree, the commit, where it
    came from (remote, branch, describe), the config, when the build started, and the patchset applied when
    nothing else was uncommitted; nothing for any other file."""
    try:
        meta = json.loads((image.parent / "meta.json").read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(meta, dict) or Path(str(meta.get("image", ""))).resolve() != image.resolve():
        return {}
    state = str(meta.get("tree_state", ""))
    found = {"git_tree": meta.get("tree"), "git_commit": state.split("+")[0], "config": meta.get("config"),
             "built_at": meta.get("started"), "git_url": meta.get("remote"), "git_branch": meta.get("branch"),
             "git_name": meta.get("name")}
    kept = {k: str(v) for k, v in found.items() if v}
    if "+" not in state and isinstance(meta.get("patchset"), str):  # "" is a patchset too: none applied
        kept["patchset_hash"] = meta["patchset"]
    return kept


ARM64_IMAGE_MAGIC = b"ARM\x64"  # at offset 56 of an arm64 Image (Documentation/arch/arm64/booting.rst)
BZIMAGE_MAGIC = b"HdrS"  # at 0x202 of an x86 bzImage (Documentation/arch/x86/boot.rst)


def image_format(head: bytes) -> str | None:
    """What kind of kernel image a file's first bytes are, of those QEMU boots; None: none of them."""
    if head[0x202:0x206] == BZIMAGE_MAGIC:
        return "bzImage"
    if head[56:60] == ARM64_IMAGE_MAGIC:
        return "arm64 Image"
    if head[:4] == b"\x7fELF":
        return "ELF vmlinux"
    if head[:2] == b"\x1f\x8b":
        return "gzip-compressed Image"
    if head[:2] == b"MZ" and head[4:8] == b"zimg":
        return "EFI zboot image"
    return None


def kernel_id_of(package: str) -> str:
    return re.sub(r"^linux-(image|binary)-", "", package)


def extracted_once(where: Path, extract: Callable[[Path], None], origin_of: Callable[[str], Origin]) -> tuple[Path, Origin]:
    """A package's image in `where`, extracted (`extract`) the first time with its origin (`origin_of` its
    sha256), and checked against that sha256 every time. The caller holds the package's lock."""
    image, meta = where / "vmlinuz", where / "origin.json"
    if not (image.is_file() and meta.is_file()):
        where.mkdir(parents=True, exist_ok=True)
        extract(image)
        atomic_write(meta, json.dumps(origin_of(sha256_of(image)).to_json(), indent=2) + "\n")
    origin = Origin(**json.loads(meta.read_text()))
    if sha256_of(image) != origin.sha256:
        raise DebianError(f"cached image {image} does not match its recorded sha256; delete {where}")
    return image, origin


def package_fields(deb: Path, copy: Path) -> tuple[str, str, str]:
    """A kernel package's name, version and architecture (dpkg-deb reads `copy`; messages name `deb`);
    KernelSpecError for a file that is no package, or one for an architecture sigwake does not boot."""
    try:
        fields = subprocess.run(["dpkg-deb", "--field", str(copy), "Package", "Version", "Architecture"],
                                capture_output=True, text=True, errors="replace", timeout=60)
    except subprocess.SubprocessError as e:
        raise KernelSpecError(f"{deb}: dpkg-deb could not read it ({e}): not booted") from e
    if fields.returncode != 0:
        why = (fields.stderr.strip().splitlines() or ["dpkg-deb failed"])[-1]
        raise KernelSpecError(f"{deb} is not a Debian package ({why}): not booted")
    control = dict(line.split(": ", 1) for line in fields.stdout.splitlines() if ": " in line)
    name, version, arch = control.get("Package", ""), control.get("Version", ""), control.get("Architecture", "")
    if arch not in BOOTABLE_ARCHES:
        raise KernelSpecError(f"{deb} is a package for {arch or 'no architecture'}; sigwake boots "
                              f"{', '.join(BOOTABLE_ARCHES)} kernels: not booted")
    return name, version, arch


def discard(deb: Path) -> None:
    """A .deb once its one file is extracted, with the folder download() gave it."""
    deb.unlink()
    deb.parent.rmdir()


@dataclass(frozen=True)
class KernelCache:
    root: Path  # e.g. ~/.cache/sigwake
    apt_sources: tuple[str, ...] = ()  # a distro's own repositories (--apt-source), searched first

    def extras(self) -> list[AptSuite]:
        return [apt_source(line, self.root) for line in self.apt_sources]

    def suite(self, suite: str, arch: str = "amd64") -> AptSuite:
        """A suite's private apt state for one architecture (amd64's keeps its older, plain name)."""
        state = self.root / "apt" / (suite if arch == "amd64" else f"{suite}-{arch}")
        return next((apt for apt in self.extras() if apt.suite == suite), AptSuite(suite, state, arch=arch))

    def newest(self, query: DebianQuery, progress: Progress, refresh: bool = False) -> Package:
        apt = self.suite(query.suite, query.arch)
        apt.update(progress, force=refresh)
        found = apt.packages(query.pattern)
        if not found:
            raise DebianError(f"{query.suite} has no package {as_glob(query.pattern)}")
        return found[0]

    def find_package(self, name: str, progress: Progress) -> Package:
        """A package named exactly `name`, in the first suite that has it (or `suite:name`): the --apt-source
        repositories first, then Debian's suites. A repository that cannot be read is named, not fatal."""
        suite, _, bare = name.rpartition(":")
        arch = Origin("debian", bare).arch or "amd64"
        candidates = ([self.suite(suite, arch)] if suite else
                      [*self.extras(), *(self.suite(s, arch) for s in SUITE_SOURCES)])
        unreadable: list[str] = []
        for apt in candidates:
            try:
                apt.update(progress)
            except DebianError as e:
                if not apt.lines:
                    raise
                unreadable.append(f"{apt.suite}: {e}")
                progress.step(f"cannot read --apt-source {apt.suite}: {e}")
                continue
            found = apt.packages(re.escape(bare))
            if found:
                return found[0]
        where = ", ".join([a.suite for a in candidates])
        raise KernelSpecError(f"no package {name!r} in {where}" + "".join(f"; unreadable: {u}" for u in unreadable))

    def holding(self, package: Package, progress: Progress) -> AbstractContextManager[None]:
        """One process at a time on a package's .deb (download() gives it a folder named for the package's name,
        version and architecture) and on what is extracted from it."""
        lock = self.root / "locks" / f"{package.name}_{package.version}_{package.arch}.lock"
        return held(lock, progress, f"{package.name} {package.version}")

    def fetch(self, package: Package, progress: Progress) -> Kernel:
        """The package's kernel image, from the cache or downloaded and extracted once."""
        where = self.root / "kernels" / f"{package.name}_{package.version}"
        if package.suite not in SUITE_SOURCES:  # a distro's own repository: never Debian's image of the same name
            where = where.with_name(f"{where.name}_{self.suite(package.suite).root.name}")

        def download(image: Path) -> None:
            deb = self.suite(package.suite, package.arch).download(package, self.root / "debs", progress)
            progress.step(f"extracting the kernel image from {deb.name}")
            extract_image(deb, image)
            discard(deb)

        with self.holding(package, progress):
            image, origin = extracted_once(where, download, lambda sha256: Origin(
                "debian", package.name, package.version, package.suite, sha256=sha256))
        return Kernel(kernel_id_of(package.name), origin, image, origin.arch or package.arch)

    def local_package(self, deb: Path, progress: Progress) -> Kernel:
        """A kernel package file (--kernel FILE.deb): its image extracted once, cached by the file's sha256;
        named as the package names itself, and apart from any other build of the same name."""
        if not deb.is_file():
            raise KernelSpecError(f"no package file at {deb}")
        digest = sha256_of(deb)
        with held(self.root / "locks" / f"deb-{digest[:16]}.lock", progress, deb.name):
            copy = self._local_copy(deb, digest)
            name, version, arch = package_fields(deb, copy)

            def extract(image: Path) -> None:
                progress.step(f"extracting the kernel image from {deb.name}")
                extract_image(copy, image)

            image, origin = extracted_once(self.root / "kernels" / f"deb-{digest[:16]}", extract, lambda sha256: Origin(
                "debian", name, version, LOCAL, path=str(deb.resolve()), sha256=sha256))
        return Kernel(f"deb-{kernel_id_of(name)}-{digest[:8]}", origin, image, arch)

    def _local_copy(self, deb: Path, digest: str) -> Path:
        """The package file, copied under the cache by its bytes (under its lock): read and extracted from that
        one copy, so a file rewritten meanwhile changes nothing."""
        copy = self.root / "debs" / "local" / digest[:16] / deb.name
        if not copy.is_file():
            copy.parent.mkdir(parents=True, exist_ok=True)
            part = copy.with_name(copy.name + ".part")
            shutil.copyfile(deb, part)
            if sha256_of(part) != digest:
                raise KernelSpecError(f"{deb} changed while it was read: not booted")
            part.rename(copy)
        return copy

    def source_tarball(self, series: str, progress: Progress) -> Path:
        """linux-source-<series>'s tarball (e.g. 6.1, 6.12), from the first suite that has it; cached."""
        return self._source_file(series, f"usr/src/linux-source-{series}.tar.xz", progress)

    def source_changelog(self, series: str, progress: Progress) -> Path:
        """linux-source-<series>'s changelog.Debian.gz (the upstream stable releases and fixes each Debian
        version took, by subject), from the same package as source_tarball(); cached."""
        return self._source_file(series, f"usr/share/doc/linux-source-{series}/changelog.Debian.gz", progress)

    def _source_file(self, series: str, member: str, progress: Progress) -> Path:
        """One file of linux-source-<series>'s package (`member`, its path there), extracted once into
        sources/<package>_<version>/ under its own name."""
        package = self.find_package(f"linux-source-{series}", progress)
        dest = self.root / "sources" / f"{package.name}_{package.version}" / member.rsplit("/", 1)[-1]
        with self.holding(package, progress):
            if not dest.is_file():
                dest.parent.mkdir(parents=True, exist_ok=True)
                deb = self.suite(package.suite).download(package, self.root / "debs", progress)
                progress.step(f"extracting {dest.name} from {deb.name}")
                if extract_file(deb, re.compile(rf"^\./{re.escape(member)}$"), dest) is None:
                    raise DebianError(f"{deb.name} holds no {member}")
                discard(deb)
        return dest

    def resolve(self, spec: str | DebianQuery, progress: Progress) -> list[Kernel]:
        """A query (expand_specs turns `default` into them), `host`, a path to an image or to a .deb, or a Debian
        package name."""
        if isinstance(spec, DebianQuery):
            return [self.fetch(self.newest(spec, progress), progress)]
        if spec == "host":
            return [host_kernel()]
        if spec.endswith(".deb"):
            return [self.local_package(Path(spec), progress)]
        if "/" in spec or Path(spec).exists():
            return [file_kernel(Path(spec))]
        if re.fullmatch(r"([a-z-]+:)?linux-[a-z]+-[0-9][A-Za-z0-9.+~-]*", spec):
            return [self.fetch(self.find_package(spec, progress), progress)]
        raise KernelSpecError(f"--kernel {spec!r}: expected default, host, a path to an image, or a Debian package name")
