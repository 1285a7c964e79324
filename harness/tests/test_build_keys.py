"""A build is keyed by its tree's content: HEAD and the uncommitted changes, whatever git's housekeeping or a
user's settings do to how a diff is printed."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest

from sigwake.core.progress import Progress
from sigwake.kernels import kconfig
from sigwake.kernels.build import BuildError, BuildRequest, KernelBuilder, git, patchset_hash, request_key, \
    snapshot_config, tree_source, tree_state
from sigwake.kernels.kernels import built_from
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


def test_each_architecture_keys_apart_and_builds_in_objects_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "perf.config").write_text("CONFIG_PERF_EVENTS=y\n")
    amd64 = BuildRequest(tmp_path, (tmp_path / "perf.config",))
    arm64 = dataclasses.replace(amd64, arch="arm64")
    # amd64's key and objects are what they were before builds had an architecture: every cached build stands
    assert request_key(amd64, "head") == "7752c473f428a561" != request_key(arm64, "head")
    builder = KernelBuilder(tmp_path / "cache")
    assert builder.objects_dir(tmp_path) == builder.objects_dir(tmp_path, "amd64") != \
        builder.objects_dir(tmp_path, "arm64")
    assert builder.objects_dir(tmp_path).name == hashlib.sha256(str(tmp_path.resolve()).encode()).hexdigest()[:12]


def test_a_cross_build_without_its_compiler_names_the_package(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no aarch64-linux-gnu-gcc there
    request = BuildRequest(tmp_path, (), arch="arm64")
    with pytest.raises(BuildError, match="needs Debian's gcc-aarch64-linux-gnu"):
        KernelBuilder(tmp_path / "cache").build(request, Progress())


def fake_tree(tree: Path) -> Path:
    """A tree whose Makefile and merge_config.sh do what the kernel's do to .config, and say what they did."""
    (tree / "scripts/kconfig").mkdir(parents=True)
    (tree / "Makefile").write_text(
        "tinyconfig:\n\techo 'CONFIG_TINY=y' > $(O)/.config\n"
        "olddefconfig:\n\techo olddefconfig >> $(O)/made\n"
        "bzImage:\n\tmkdir -p $(O)/arch/x86/boot && echo image > $(O)/arch/x86/boot/bzImage\n")
    merge = tree / "scripts/kconfig/merge_config.sh"
    merge.write_text('#!/bin/sh\nshift 2\nfor f; do cat "$f" >> .config; echo "$(basename "$f")" >> merged; done\n')
    merge.chmod(0o755)
    git(tree, "init", "-q")
    commit_all(tree, "base")
    return tree


def test_a_full_config_is_the_base_with_its_own_keys_then_the_fragments_and_keys_its_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = fake_tree(tmp_path / "tree")
    (tmp_path / "perf.config").write_text("# sigwake: essential\nCONFIG_PERF_EVENTS=y\n")
    distro = tmp_path / "config-6.12.118+deb13-amd64"
    distro.write_text('CONFIG_MODULES=y\nCONFIG_SYSTEM_TRUSTED_KEYS="debian/certs/debian-uefi-certs.pem"\n')
    request = BuildRequest(tree, (tmp_path / "perf.config",))
    builder = KernelBuilder(tmp_path / "cache", jobs=1, base_config=distro)
    built = builder.build(request, Progress(quiet=True))
    out = builder.objects_dir(tree)
    config = (out / ".config").read_text()
    assert "CONFIG_TINY" not in config and config.startswith("CONFIG_MODULES=y\n")  # no tinyconfig under it
    assert (out / "merged").read_text().split() == ["own-keys.config", "perf.config"]
    assert config.rstrip().endswith("CONFIG_PERF_EVENTS=y")  # the fragments win over the base
    sha = hashlib.sha256(distro.read_bytes()).hexdigest()[:12]
    assert built.config == f"config-6.12.118+deb13-amd64 (sha256 {sha}) + own-keys.config + perf.config"
    # the base config keys the build: another config, or none, is another kernel
    tiny = KernelBuilder(tmp_path / "cache", jobs=1).build(request, Progress(quiet=True))
    assert tiny.config == "tinyconfig + perf.config" and "CONFIG_TINY=y" in (out / ".config").read_text()
    # the base config keys the build, and so does own-keys.config merged on it
    keyed = request_key(request, built.tree_state, distro)
    other_keys = tmp_path / "own-keys.config"
    other_keys.write_text('CONFIG_SYSTEM_TRUSTED_KEYS="x.pem"\n')
    monkeypatch.setattr(kconfig, "OWN_KEYS", other_keys)
    assert request_key(request, built.tree_state, distro) != keyed
    snapshot = snapshot_config(distro, tmp_path / "cache")
    distro.write_text("CONFIG_MODULES=n\n")  # the file changes; the snapshot a command builds from does not
    assert snapshot.read_text().startswith("CONFIG_MODULES=y") and snapshot.name == distro.name
    assert len({built.key, tiny.key, request_key(request, built.tree_state, distro)}) == 3


def test_a_build_records_where_its_tree_came_from_as_a_kcidb_checkout_names_it(tmp_path: Path) -> None:
    tree = fake_tree(tmp_path / "tree")
    git(tree, "checkout", "-q", "-b", "perf-fixes")
    git(tree, "remote", "add", "upstream", "https://me:token@git.kernel.org/pub/scm/linux/kernel/git/perf/linux.git")
    git(tree, "config", "branch.perf-fixes.remote", "upstream")
    git(tree, "config", "branch.perf-fixes.merge", "refs/heads/perf/core")  # the branch it pulls, not the local name
    git(tree, "tag", "v6.18-rc1")
    (tmp_path / "perf.config").write_text("# sigwake: essential\nCONFIG_PERF_EVENTS=y\n")
    built = KernelBuilder(tmp_path / "cache", jobs=1).build(BuildRequest(tree, (tmp_path / "perf.config",)),
                                                            Progress(quiet=True))
    assert (built.remote, built.branch, built.name, built.patchset) == (  # no user or token in the URL
        "https://git.kernel.org/pub/scm/linux/kernel/git/perf/linux.git", "perf/core", "v6.18-rc1", "")
    origin = built_from(built.image)  # what the kernel's result records (file_kernel's Origin)
    assert (origin["git_url"], origin["git_branch"], origin["git_name"], origin["patchset_hash"]) == (
        built.remote, "perf/core", "v6.18-rc1", "")
    git(tree, "checkout", "-q", "--detach")
    assert tree_source(tree)["branch"] == ""  # a detached HEAD is on no branch
    (tree / "Makefile").write_text((tree / "Makefile").read_text() + "# changed\n")  # uncommitted: no patchset known
    dirty = KernelBuilder(tmp_path / "cache", jobs=1).build(BuildRequest(tree, (tmp_path / "perf.config",)),
                                                            Progress(quiet=True))
    assert "patchset_hash" not in built_from(dirty.image)


def test_a_patchset_is_hashed_as_kcidb_says(tmp_path: Path) -> None:
    first, second = tmp_path / "0001.patch", tmp_path / "0002.patch"
    first.write_text("one\n")
    second.write_text("two\n")
    lines = "".join(hashlib.sha256(p.read_bytes()).hexdigest() + "\n" for p in (first, second))
    assert patchset_hash((first, second)) == hashlib.sha256(lines.encode()).hexdigest()  # sha256sum | cut | sha256sum
    assert patchset_hash(()) == "" and patchset_hash((second, first)) != patchset_hash((first, second))
