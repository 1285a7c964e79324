"""Debian kernel packages: find the newest of a name pattern in a suite, download
it once, extract only the kernel image. Every suite is read through a private
apt state directory inside the cache; the system's apt sources are never touched."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tarfile
import time
from dataclasses import dataclass
from functools import cmp_to_key
from pathlib import Path

import apt_pkg

from ..core.atomic import atomic_stream, atomic_write
from ..core.file_lock import held
from ..core.progress import EVERY_S, Progress

DOWNLOAD_TIMEOUT_S = 900.0

MIRROR = "http://deb.debian.org/debian"
SECURITY_MIRROR = "http://deb.debian.org/debian-security"
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"

# What each suite name reads: stable suites include their security updates.
SUITE_SOURCES: dict[str, tuple[tuple[str, str], ...]] = {
    "bookworm": ((MIRROR, "bookworm"), (SECURITY_MIRROR, "bookworm-security")),
    "bookworm-backports": ((MIRROR, "bookworm-backports"),),
    "trixie": ((MIRROR, "trixie"), (SECURITY_MIRROR, "trixie-security")),
    "sid": ((MIRROR, "sid"),),
}

LISTS_MAX_AGE_S = 6 * 3600

# Where a kernel package keeps its image: /boot up to Debian 13, /usr/lib/modules after.
IMAGE_MEMBER = re.compile(r"^\./(boot/vmlinuz-[^/]+|usr/lib/modules/[^/]+/vmlinuz)$")


class DebianError(RuntimeError):
    """apt could not answer or the package is not what we expected."""


@dataclass(frozen=True)
class Package:
    suite: str
    name: str
    version: str
    arch: str = "amd64"


@dataclass(frozen=True)
class AptSuite:
    """One suite's private apt state under `root`: a Debian suite of SUITE_SOURCES, or a distro's own
    repositories given as sources.list lines (`lines`; `suite` is then their label)."""

    suite: str
    root: Path
    lines: tuple[str, ...] = ()
    arch: str = "amd64"

    def options(self) -> list[str]:
        r = self.root
        return [
            "-o", f"Dir::State={r}/state",
            "-o", f"Dir::State::status={r}/state/status",
            "-o", f"Dir::Cache={r}/cache",
            "-o", f"Dir::Etc::SourceList={r}/sources.list",
            "-o", "Dir::Etc::SourceParts=/nonexistent",
            "-o", "Dir::Etc::Preferences=/nonexistent",
            "-o", "Dir::Etc::PreferencesParts=/nonexistent",
            "-o", f"APT::Architecture={self.arch}",
            "-o", f"APT::Architectures::={self.arch}",
            "-o", "Debug::NoLocking=1",
            "-o", "APT::Sandbox::User=root",  # the private state lives in root's cache, which _apt cannot read
        ]

    def prepare(self) -> None:
        if not self.lines and self.suite not in SUITE_SOURCES:
            raise DebianError(f"unknown suite {self.suite!r}; known: {', '.join(SUITE_SOURCES)}")
        for sub in ("state/lists/partial", "cache/archives/partial"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        (self.root / "state/status").touch()
        lines = list(self.lines) or [f"deb [signed-by={KEYRING}] {mirror} {dist} main"
                                     for mirror, dist in SUITE_SOURCES[self.suite]]
        atomic_write(self.root / "sources.list", "\n".join(lines) + "\n")  # another reader may be in apt-cache

    def update(self, progress: Progress, force: bool = False) -> None:
        # One updater per state: apt runs here with its own locking off (Debug::NoLocking).
        with held(self.root / "update.lock", progress, f"the apt state of {self.suite}"):
            self.prepare()
            stamp = self.root / "updated"
            if not force and stamp.exists() and time.time() - stamp.stat().st_mtime < LISTS_MAX_AGE_S:
                return
            progress.step(f"apt: updating the package lists of {self.suite} (private state in {self.root})")
            self._run(["apt-get", *self.options(), "-q", "update"])
            stamp.touch()

    def packages(self, pattern: str, prefix: str = "linux-") -> list[Package]:
        """Every package whose whole name matches the Python regex `pattern` (and starts with `prefix`),
        newest first."""
        regex = re.compile(pattern)
        with held(self.root / "update.lock", Progress(quiet=True), f"the apt state of {self.suite}", shared=True):
            names = [n for n in self._run(["apt-cache", *self.options(), "pkgnames", prefix]).split()
                     if regex.fullmatch(n)]
            if not names:
                return []
            stanzas = self._run(["apt-cache", *self.options(), "show", "--no-all-versions", *names])
        found = [
            Package(self.suite, name, version, self.arch)
            for name, version in re.findall(r"^Package: (\S+)\n(?:.*\n)*?Version: (\S+)$", stanzas, re.M)
        ]
        apt_pkg.init_system()
        return sorted(found, key=cmp_to_key(compare_versions), reverse=True)

    def download(self, package: Package, debs: Path, progress: Progress) -> Path:
        """The package's .deb, in a folder of its own under `debs` (its name, version and architecture): another
        version or architecture of the same name, fetched at the same time, never meets it."""
        dest_dir = debs / f"{package.name}_{package.version.replace(':', '%3a')}_{package.arch}"
        dest_dir.mkdir(parents=True, exist_ok=True)
        existing = sorted(dest_dir.glob(f"{package.name}_*.deb"))
        if existing:
            return existing[-1]
        progress.step(f"apt: downloading {package.name} {package.version} from {self.suite}")
        argv = ["apt-get", *self.options(), "-q", "download", f"{package.name}={package.version}"]
        with subprocess.Popen(argv, cwd=dest_dir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as proc:
            deadline = time.monotonic() + DOWNLOAD_TIMEOUT_S
            while True:  # a long download says how far it got, every EVERY_S
                try:
                    _, stderr = proc.communicate(timeout=EVERY_S)
                    break
                except subprocess.TimeoutExpired:
                    if time.monotonic() > deadline:
                        proc.kill()
                        raise DebianError(f"downloading {package.name} took over {DOWNLOAD_TIMEOUT_S} s")
                    sofar = sum(f.stat().st_size for f in dest_dir.rglob("*") if f.is_file()) >> 20
                    progress.step(f"  downloading {package.name}: {sofar} MiB so far")
        if proc.returncode != 0:
            raise DebianError(f"apt-get download {package.name} failed ({proc.returncode}): {stderr.strip()[-800:]}")
        got = sorted(dest_dir.glob(f"{package.name}_*.deb"))
        if not got:
            raise DebianError(f"apt-get download left no .deb for {package.name}")
        return got[-1]

    def _run(self, argv: list[str], cwd: Path | None = None) -> str:
        done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            # apt's own words: each failed fetch (stdout "Err:" and the HTTP status under it) and its errors
            said = re.findall(r"^(Err:.*\n\s+.*|E: .*)$", done.stdout + "\n" + done.stderr, re.M)
            why = "; ".join(" ".join(s.split()) for s in said) or done.stderr.strip()[-800:]
            raise DebianError(f"{' '.join(argv[:1] + argv[-3:])} failed ({done.returncode}): {why[-1200:]}")
        return done.stdout


def compare_versions(a: Package, b: Package) -> int:
    return int(apt_pkg.version_compare(a.version, b.version))  # as dpkg orders them


def extract_file(deb: Path, member: re.Pattern[str], dest: Path) -> Path | None:
    """Copies the first file of a .deb whose path matches `member` to `dest` (nothing is installed)."""
    with subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        try:
            with tarfile.open(fileobj=proc.stdout, mode="r|") as archive:
                for entry in archive:
                    if entry.isfile() and member.match(entry.name):
                        source = archive.extractfile(entry)
                        assert source is not None
                        with atomic_stream(dest) as out:
                            shutil.copyfileobj(source, out, 1 << 20)
                        proc.kill()
                        return dest
        except tarfile.TarError as e:  # a damaged package: dpkg-deb said why on stderr
            proc.kill()
            raise DebianError(f"{deb.name}: its files cannot be read ({e})") from e
        proc.wait()
    return None


def extract_image(deb: Path, dest: Path) -> Path:
    """The kernel image of a linux-image/linux-binary package."""
    if extract_file(deb, IMAGE_MEMBER, dest) is None:
        raise DebianError(f"{deb.name} holds no kernel image (looked for /boot/vmlinuz-* and /usr/lib/modules/*/vmlinuz)")
    return dest


SOURCE_LINE = re.compile(r"deb\s+(\[[^\]]*\]\s+)?\S+://\S+\s+\S+(\s+\S+)*")


def apt_source(line: str, cache_root: Path) -> AptSuite:
    """A distro's own repository, as one sources.list line, in a private state of its own."""
    line = " ".join(line.split())
    if not SOURCE_LINE.fullmatch(line):
        raise DebianError(f"--apt-source {line!r}: expected a sources.list line, "
                          "\"deb [signed-by=KEYRING] URL SUITE COMPONENT\" (or \"deb [...] URL ./\" for a flat repository)")
    label = re.sub(r"^deb\s+(\[[^\]]*\]\s+)?", "", line)
    key = hashlib.sha256(line.encode()).hexdigest()[:12]
    return AptSuite(label, cache_root / "apt" / f"source-{key}", (line,))
