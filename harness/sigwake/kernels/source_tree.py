"""Debian's linux-source-<series> as a git tree: what the slow tests, the
mutant bench and the build bench start from. A tree is unpacked once, committed
as its base, and reused; commits made on it are the caller's."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .build import git
from .kernels import KernelCache
from ..core.progress import Progress

AUTHOR = ("-c", "user.name=sigwake", "-c", "user.email=sigwake@localhost")


def commit_all(tree: Path, message: str) -> str:
    """Commits every change (Debian's tarball ignores its own top level in .gitignore: -f)."""
    git(tree, "add", "-f", "-A")
    git(tree, *AUTHOR, "commit", "-q", "--allow-empty", "-m", message)
    return git(tree, "rev-parse", "HEAD").strip()


def apply_mail(tree: Path, patch: Path) -> str:
    """Commits a format-patch file with git am; returns the new HEAD."""
    git(tree, *AUTHOR, "am", "-q", str(patch))
    return git(tree, "rev-parse", "HEAD").strip()


def unpack(cache: KernelCache, series: str, into: Path, progress: Progress) -> Path:
    """A fresh tree of linux-source-<series> under `into`, committed as "base"."""
    tarball = cache.source_tarball(series, progress)
    into.mkdir(parents=True, exist_ok=True)
    progress.step(f"unpacking {tarball.name} into {into}")
    subprocess.run(["tar", "-xJf", str(tarball), "-C", str(into)], check=True, timeout=900)
    (tree,) = into.iterdir()
    git(tree, "init", "-q")
    commit_all(tree, f"base: Debian's linux-source-{series}")
    return tree


def kept_tree(cache: KernelCache, series: str, progress: Progress, copy: int = 0) -> Path:
    """One long-lived tree per series under the cache, on its base commit and clean; `copy` > 0 names another
    (two processes building at once need a tree each)."""
    root = cache.root / "trees" / (f"linux-{series}" + (f".{copy}" if copy else ""))
    existing = [p for p in root.iterdir()] if root.is_dir() else []
    if len(existing) == 1 and (existing[0] / ".git").is_dir():
        tree = existing[0]
        base = git(tree, "rev-list", "--max-parents=0", "HEAD").split()[0]
        git(tree, "checkout", "-q", "-f", base)
        return tree
    if existing:
        subprocess.run(["rm", "-rf", str(root)], check=True)
    return unpack(cache, series, root, progress)
