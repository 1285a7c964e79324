"""A build is keyed by its tree's content: HEAD and the uncommitted changes, whatever git's housekeeping or a
user's settings do to how a diff is printed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from sigwake.kernels.build import tree_state

IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@t")


def git(tree: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(tree), *IDENTITY, *args], check=True, capture_output=True, timeout=60)


def test_an_uncommitted_change_keys_the_same_however_git_abbreviates_or_packs(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    for n in range(50):
        (tmp_path / f"file{n}.c").write_text(f"int f{n};\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "base")
    clean = tree_state(tmp_path)
    (tmp_path / "file7.c").write_text("int f7 = 1;\n")
    changed = tree_state(tmp_path)
    assert changed.startswith(clean + "+") and len(changed) > len(clean) + 1
    git(tmp_path, "config", "core.abbrev", "12")  # as git does on its own once it has packed enough objects
    assert tree_state(tmp_path) == changed
    git(tmp_path, "config", "diff.noprefix", "true")
    git(tmp_path, "config", "color.diff", "always")
    git(tmp_path, "gc", "-q")
    assert tree_state(tmp_path) == changed
    (tmp_path / "file7.c").write_text("int f7 = 2;\n")
    assert tree_state(tmp_path) not in (changed, clean)
