"""A build is keyed by its tree's content: HEAD and the uncommitted changes, whatever git's housekeeping or a
user's settings do to how a diff is printed."""

from __future__ import annotations

from pathlib import Path

from sigwake.kernels.build import git, tree_state
from sigwake.kernels.source_tree import commit_all


def test_an_uncommitted_change_keys_the_same_however_git_abbreviates_or_packs(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    for n in range(50):
        (tmp_path / f"file{n}.c").write_text(f"int f{n};\n")
    commit_all(tmp_path, "base")
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


def test_a_deletion_a_mode_and_a_link_each_key_apart(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "script").write_text("deleted")  # the bytes a deletion must not read as
    (tmp_path / "gone.c").write_text("int g;\n")
    (tmp_path / "target").write_text("int t;\n")
    commit_all(tmp_path, "base")
    seen = {tree_state(tmp_path)}
    (tmp_path / "gone.c").unlink()
    seen.add(tree_state(tmp_path))
    (tmp_path / "gone.c").write_text("deleted")
    seen.add(tree_state(tmp_path))
    (tmp_path / "gone.c").unlink()
    (tmp_path / "gone.c").symlink_to("target")  # a link, not its target's contents
    seen.add(tree_state(tmp_path))
    (tmp_path / "gone.c").unlink()
    (tmp_path / "gone.c").write_text("int g;\n")
    (tmp_path / "script").chmod(0o755)
    seen.add(tree_state(tmp_path))
    assert len(seen) == 5, seen
