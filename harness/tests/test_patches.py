"""Patches applied to a tree and taken back out (kernels/patches.py), on a small git tree."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from sigwake.kernels import patches


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "core.c").write_text("int a;\n")
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    subprocess.run(["git", "-C", str(tree), "add", "core.c"], check=True)
    (tree / "core.c").write_text("int a;\nint b;\n")
    diff = subprocess.run(["git", "-C", str(tree), "diff"], check=True, capture_output=True, text=True).stdout
    (tree / "core.c").write_text("int a;\n")
    patch = tmp_path / "0001-b.patch"
    patch.write_text(diff)
    return tree, patch


def test_a_patch_is_in_inside_and_out_after(tmp_path: Path) -> None:
    tree, patch = _tree(tmp_path)
    with patches.applied(tree, [patch]):
        assert (tree / "core.c").read_text() == "int a;\nint b;\n"
    assert (tree / "core.c").read_text() == "int a;\n"


def test_a_patch_left_in_by_a_killed_run_is_named_so(tmp_path: Path) -> None:
    tree, patch = _tree(tmp_path)
    subprocess.run(["git", "-C", str(tree), "apply", str(patch)], check=True)
    with pytest.raises(patches.PatchError, match=r"already applied .* apply -R"):
        with patches.applied(tree, [patch]):
            pass
    assert (tree / "core.c").read_text() == "int a;\nint b;\n"


def test_a_patch_for_another_tree_is_refused_as_such(tmp_path: Path) -> None:
    tree, patch = _tree(tmp_path)
    (tree / "core.c").write_text("int c;\n")
    with pytest.raises(patches.PatchError, match="does not apply"):
        with patches.applied(tree, [patch]):
            pass
