"""Kernels built from source: a git tree, config fragments and patches in; a
bootable image out, cached by tree state, config and patches. Objects live in
one output directory per tree (O=), so consecutive builds are incremental, and
ccache keeps compiled objects across output directories and cold trees."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TextIO

from . import kconfig
from . import patches
from ..core.atomic import atomic_write
from ..core.progress import EVERY_S, Progress


@dataclass(frozen=True)
class KernelArch:
    """How the kernel's make builds for one architecture (Debian's name for it)."""

    make_arch: str  # ARCH=
    cross_compile: str  # CROSS_COMPILE=, "" on this machine's own
    image: str  # the image QEMU boots when there is no PVH vmlinux, in O=


KERNEL_ARCHES = {
    "amd64": KernelArch("x86_64", "", "arch/x86/boot/bzImage"),  # x86_64: without it a tinyconfig is 32-bit
    "arm64": KernelArch("arm64", "aarch64-linux-gnu-", "arch/arm64/boot/Image"),  # Debian's gcc-aarch64-linux-gnu
}


class BuildError(RuntimeError):
    """Something could not be configured or built; the message says what, and names the log."""


@dataclass(frozen=True)
class BuildRequest:
    tree: Path
    fragments: tuple[Path, ...]
    patches: tuple[Path, ...] = ()
    base: str = "tinyconfig"
    arch: str = "amd64"  # a key of KERNEL_ARCHES


@dataclass
class BuiltKernel:
    image: Path  # what QEMU boots: vmlinux where PVH is configured, else bzImage
    key: str
    tree_state: str
    log: Path
    seconds: float
    cached: bool = False
    warnings: list[str] = field(default_factory=list)  # optional options the tree dropped
    tree: str = ""  # what it was built from: the tree, its config fragments, when the build started
    config: str = ""
    started: str = ""
    code: str = ""  # code_digest() of the image: equal in two builds, equal kernels ("" where not known)
    remote: str = ""  # where the tree's commit came from (tree_source): its branch's remote, the branch,
    branch: str = ""  # `git describe`; and the patches applied, hashed as KCIDB hashes a patchset
    name: str = ""
    patchset: str = ""


def git(tree: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise BuildError(f"git {' '.join(args)} in {tree}: {done.stderr.strip()}")
    return done.stdout


def _git_or_empty(tree: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True, timeout=600)
    return done.stdout.strip() if done.returncode == 0 else ""


def tree_source(tree: Path) -> dict[str, str]:
    """Where a tree's HEAD came from, as a KCIDB checkout names it: the URL of the remote its branch pulls from
    (else `origin`; no user or token in it), the remote branch it pulls (none for a local branch that pulls
    nothing, or a detached HEAD) and `git describe`; "" for each it does not have."""
    local = _git_or_empty(tree, "symbolic-ref", "--short", "-q", "HEAD")
    remote = (_git_or_empty(tree, "config", f"branch.{local}.remote") if local else "") or "origin"
    merge = _git_or_empty(tree, "config", f"branch.{local}.merge") if local else ""
    url = _git_or_empty(tree, "remote", "get-url", remote) if remote != "." else ""
    return {"remote": re.sub(r"^(\w[\w+.-]*://)[^/@]*@", r"\1", url),
            "branch": merge.removeprefix("refs/heads/"),  # a local branch that pulls nothing is no remote's
            "name": _git_or_empty(tree, "describe", "--tags", "--always", "HEAD")}


def patchset_hash(files: tuple[Path, ...]) -> str:
    """KCIDB's patchset_hash of the patch files, in order: sha256 over each file's sha256 and a newline
    (`sha256sum *.patch | cut -c-64 | sha256sum`); "" for none."""
    if not files:
        return ""
    lines = "".join(hashlib.sha256(f.read_bytes()).hexdigest() + "\n" for f in files)
    return hashlib.sha256(lines.encode()).hexdigest()


def tree_state(tree: Path) -> str:
    """HEAD, plus a digest of the uncommitted changes to tracked files: of their paths and contents, never of a
    diff's text, which git prints by the user's settings and abbreviates by how many objects it has packed (a
    gc after committing a fresh tree would move the key)."""
    if not (tree / ".git").exists():
        raise BuildError(f"{tree} is not a git tree: sigwake keys builds by commit and reverts its patches with git")
    head = git(tree, "rev-parse", "HEAD").strip()
    changed = [p for p in git(tree, "diff", "--name-only", "--no-relative", "--no-renames", "-z", "HEAD").split("\0") if p]
    if not changed:
        return head
    digest = hashlib.sha256()
    for name in sorted(changed):
        entry = _worktree_entry(tree / name)
        digest.update(f"{name}\0{len(entry)}\0".encode() + entry)
    return f"{head}+{digest.hexdigest()[:12]}"


def _worktree_entry(path: Path) -> bytes:
    """What a changed path holds, tagged by kind so no two kinds read alike: gone, a link's text, a submodule's
    commit, or a file's executable bit and contents."""
    if not os.path.lexists(path):
        return b"gone"
    if path.is_symlink():
        return b"link\0" + os.readlink(path).encode()
    if path.is_dir():
        return b"submodule\0" + (git(path, "rev-parse", "HEAD").strip().encode() if (path / ".git").exists() else b"")
    content = path.read_bytes()
    executable = path.stat().st_mode & 0o111 != 0
    return f"file\0{executable:d}\0".encode() + content


# The sections that hold a kernel's code and initialised data: identical in two images, their kernels behave
# alike (the build's identity is pinned, so nothing else differs between a tree and the same tree patched).
CODE_SECTIONS = (".text", ".rodata", ".data")


def code_digest(image: Path) -> str:
    """A digest of an ELF vmlinux's code sections; "" for an image that is not one (a bzImage), which then
    compares equal to nothing."""
    digest = hashlib.sha256()
    with image.open("rb") as f:
        if f.read(4) != b"\x7fELF":
            return ""
    for section in CODE_SECTIONS:
        done = subprocess.run(["objcopy", "-O", "binary", f"--only-section={section}", str(image), "/dev/stdout"],
                              capture_output=True, timeout=300)
        if done.returncode != 0:
            raise BuildError(f"objcopy {section} of {image}: {done.stderr.decode(errors='replace').strip()}")
        digest.update(section.encode() + b"\0" + done.stdout)
    return digest.hexdigest()


def pinned_identity(tree: Path) -> dict[str, str]:
    """What a kernel records of its build (uname -v), pinned to the tree's commit: two builds of one tree state
    make the same bytes, and a patch's effect on the code is all that differs."""
    when = git(tree, "log", "-1", "--format=%cD", "HEAD").strip()
    return {"KBUILD_BUILD_TIMESTAMP": when, "KBUILD_BUILD_USER": "sigwake", "KBUILD_BUILD_HOST": "sigwake",
            "KBUILD_BUILD_VERSION": "1"}


def request_key(request: BuildRequest, state: str, base_config: Path | None = None) -> str:
    digest = hashlib.sha256(f"{KERNEL_ARCHES[request.arch].make_arch} {request.base} {state}".encode())
    if base_config is not None:
        digest.update(b"base config\0" + base_config.read_bytes())
    for path in (*((kconfig.OWN_KEYS,) if base_config is not None else ()), *request.fragments, *request.patches):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def snapshot_config(config: Path, cache: Path) -> Path:
    """--config's file, copied once under the cache by its content: every build of a command (validate-patch's
    base and patched, a bisection's steps) starts from the same bytes, whatever happens to the file meanwhile."""
    data = config.read_bytes()
    copy = cache / "configs" / hashlib.sha256(data).hexdigest()[:16] / config.name
    if not copy.is_file():
        copy.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(copy, data)
    return copy


@dataclass(frozen=True)
class KernelBuilder:
    cache: Path  # builds/<key>/ (image, log, meta), objects/<tree>/ (O=), ccache/
    jobs: int = os.cpu_count() or 1
    ccache: Path | None = None  # default: <cache>/ccache
    # A full .config (--config, e.g. a distro's) every build starts from instead of the request's base target;
    # the fragments are merged on top, and own-keys.config makes the build's own signing keys.
    base_config: Path | None = None

    def build(self, request: BuildRequest, progress: Progress) -> BuiltKernel:
        arch = KERNEL_ARCHES[request.arch]
        if arch.cross_compile and shutil.which(arch.cross_compile + "gcc") is None:
            raise BuildError(f"no {arch.cross_compile}gcc: a kernel for {request.arch} needs Debian's "
                             f"gcc-{arch.cross_compile.rstrip('-')}")
        state = tree_state(request.tree)
        key = request_key(request, state, self.base_config)
        dest = self.cache / "builds" / key
        meta = dest / "meta.json"
        if meta.exists():
            saved = json.loads(meta.read_text())
            built = BuiltKernel(Path(saved["image"]), saved["key"], saved["tree_state"], Path(saved["log"]),
                                saved["seconds"], True, saved["warnings"], saved.get("tree", ""),
                                saved.get("config", ""), saved.get("started", ""), saved.get("code", ""),
                                saved.get("remote", ""), saved.get("branch", ""), saved.get("name", ""),
                                saved.get("patchset", ""))
            progress.step(f"kernel {state[:12]} already built ({key}): {built.image}")
            return built

        dest.mkdir(parents=True, exist_ok=True)
        out = self.objects_dir(request.tree, request.arch)
        out.mkdir(parents=True, exist_ok=True)
        log = dest / "build.log"
        started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        start = time.monotonic()
        source = tree_source(request.tree)
        with log.open("w") as log_file, patches.applied(request.tree, list(request.patches)):
            warnings = self._configure(request, out, log_file, progress)
            config = kconfig.read_options((out / ".config").read_text())
            target = "vmlinux" if config.get("CONFIG_PVH") == "y" else Path(arch.image).name
            progress.step(f"building {target} of {state[:12]} with {self.jobs} jobs (log: {log})")
            self._make(request.tree, out, [target], log_file, progress, f"build of {state[:12]}", request.arch)
        built_image = out / "vmlinux" if target == "vmlinux" else out / arch.image
        image = dest / target
        shutil.copyfile(built_image, image)
        config = " + ".join(p.name for p in (*self.fragments_of(request), *request.patches))
        built = BuiltKernel(image, key, state, log, round(time.monotonic() - start, 1), False, warnings,
                            str(request.tree.resolve()), f"{self.base_of(request)} + {config}", started,
                            code_digest(image), source["remote"], source["branch"], source["name"],
                            patchset_hash(request.patches))
        atomic_write(meta, json.dumps({**asdict(built), "image": str(image), "log": str(log)}, indent=2) + "\n")
        progress.step(f"built {image} in {built.seconds} s")
        return built

    def objects_dir(self, tree: Path, arch: str = "amd64") -> Path:
        """The O= directory of a tree for one architecture: one each, so their builds are incremental."""
        name = hashlib.sha256(str(tree.resolve()).encode()).hexdigest()[:12]
        return self.cache / "objects" / (name if arch == "amd64" else f"{name}-{arch}")

    def base_of(self, request: BuildRequest) -> str:
        if self.base_config is None:
            return request.base
        return f"{self.base_config.name} (sha256 {hashlib.sha256(self.base_config.read_bytes()).hexdigest()[:12]})"

    def fragments_of(self, request: BuildRequest) -> tuple[Path, ...]:
        """A full .config names its distro's certificates, which no other tree holds: own-keys.config first."""
        return (kconfig.OWN_KEYS, *request.fragments) if self.base_config else request.fragments

    def _configure(self, request: BuildRequest, out: Path, log_file: TextIO, progress: Progress) -> list[str]:
        fragments = self.fragments_of(request)
        progress.step(f"configuring: {self.base_of(request)} + {', '.join(p.stem for p in fragments)}")
        if self.base_config:
            shutil.copyfile(self.base_config, out / ".config")
        else:
            self._make(request.tree, out, [request.base], log_file, progress, "make " + request.base, request.arch)
        merge = request.tree.resolve() / "scripts/kconfig/merge_config.sh"
        # With -m it writes $KCONFIG_CONFIG relative to the working directory: run it in O=.
        self._run([str(merge), "-m", ".config", *[str(p.resolve()) for p in fragments]], out, log_file,
                  progress, "merge_config.sh")
        self._make(request.tree, out, ["olddefconfig"], log_file, progress, "make olddefconfig", request.arch)
        result = kconfig.check([kconfig.read_fragment(p) for p in fragments],
                               kconfig.read_options((out / ".config").read_text()))
        for warning in result.warnings:
            progress.step(f"warning: {warning}")
        if result.errors:
            raise BuildError("essential config options dropped by the tree:\n  " + "\n  ".join(result.errors))
        return result.warnings

    def make(self, tree: Path, targets: list[str], log: Path, progress: Progress, arch: str = "amd64") -> Path:
        """Makes other targets of the tree's objects (e.g. bzImage next to a PVH vmlinux); returns O=."""
        out = self.objects_dir(tree, arch)
        with log.open("a") as log_file:
            self._make(tree, out, targets, log_file, progress, "make " + " ".join(targets), arch)
        return out

    def _make(self, tree: Path, out: Path, targets: list[str], log_file: TextIO, progress: Progress, what: str,
              arch: str) -> None:
        kernel_arch = KERNEL_ARCHES[arch]
        cross = [f"CROSS_COMPILE={kernel_arch.cross_compile}"] if kernel_arch.cross_compile else []
        argv = ["make", "-C", str(tree.resolve()), f"O={out}", f"ARCH={kernel_arch.make_arch}", *cross,
                f"-j{self.jobs}", f"CC=ccache {kernel_arch.cross_compile}gcc", *targets]
        self._run(argv, out, log_file, progress, what, pinned_identity(tree))

    def _run(self, argv: list[str], cwd: Path, log_file: TextIO, progress: Progress, what: str,
             identity: dict[str, str] | None = None) -> None:
        env = {**os.environ, "CCACHE_DIR": str(self.ccache or self.cache / "ccache"), "KCONFIG_CONFIG": ".config",
               **(identity or {})}
        last_report = time.monotonic()
        with subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              stdin=subprocess.DEVNULL) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                log_file.write(line)
                if time.monotonic() - last_report > EVERY_S:
                    progress.step(f"  {what}: {line.strip()[:100]}")
                    last_report = time.monotonic()
            code = proc.wait()
        log_file.flush()
        if code != 0:
            raise BuildError(f"{what} failed ({code}); see {log_file.name}")
