"""Patches for a kernel tree: git format-patch files and mboxes (split with git
mailsplit), applied to the working tree and taken back out afterwards, so the
tree is left as it was found."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class PatchError(RuntimeError):
    pass


def _git(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True, timeout=600)


def split(patch_files: list[Path], work: Path) -> list[Path]:
    """One file per patch, in order: an mbox of several becomes several."""
    out: list[Path] = []
    for index, path in enumerate(patch_files):
        if not path.is_file():
            raise PatchError(f"no patch at {path}")
        text = path.read_text(errors="replace")
        if text.startswith("From ") + text.count("\nFrom ") > 1:
            target = work / f"{index:03d}"
            target.mkdir(parents=True)
            done = subprocess.run(["git", "mailsplit", f"-o{target}", str(path)], capture_output=True, text=True)
            if done.returncode != 0:
                raise PatchError(f"git mailsplit {path}: {done.stderr.strip()}")
            out += sorted(target.iterdir())
        else:
            out.append(path)
    return out


def _refusal(tree: Path, patch: Path, said: str) -> str:
    # A run killed while a patch was in (SIGKILL skips the way out) leaves it applied: say so, and how to
    # take it out, rather than git's hunk-by-hunk refusal.
    if _git(tree, "apply", "-R", "--check", str(patch.resolve())).returncode == 0:
        return (f"{patch.name} is already applied to {tree} (a run stopped before taking it back out?): "
                f"git -C {tree} apply -R {patch.resolve()} takes it out")
    return f"{patch.name} does not apply to {tree}: {said}"


@contextmanager
def applied(tree: Path, patch_files: list[Path]) -> Iterator[list[Path]]:
    """Applies every patch (or none, if one does not apply); reverts them on the way out."""
    with tempfile.TemporaryDirectory(prefix="sigwake-patches-") as work:
        patches = split(patch_files, Path(work))
        done: list[Path] = []
        try:
            for patch in patches:
                result = _git(tree, "apply", str(patch.resolve()))
                if result.returncode != 0:
                    raise PatchError(_refusal(tree, patch, result.stderr.strip()))
                done.append(patch)
            yield patches
        finally:
            for patch in reversed(done):
                result = _git(tree, "apply", "-R", str(patch.resolve()))
                if result.returncode != 0:
                    raise PatchError(f"could not take {patch.name} back out of {tree}: {result.stderr.strip()}")
