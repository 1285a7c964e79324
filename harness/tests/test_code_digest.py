"""What proves a mutant equivalent: two images whose code sections are equal byte for byte, and builds whose
recorded identity (uname -v) is pinned to the tree, so nothing but the code can differ."""

from __future__ import annotations

import subprocess
from pathlib import Path

from sigwake.kernels.build import code_digest, pinned_identity


def compiled(tmp_path: Path, name: str, source: str) -> Path:
    (tmp_path / f"{name}.c").write_text(source)
    subprocess.run(["gcc", "-O2", "-c", "-o", str(tmp_path / f"{name}.o"), str(tmp_path / f"{name}.c")], check=True,
                   timeout=60)
    return tmp_path / f"{name}.o"


def test_equal_code_has_one_digest_and_a_changed_constant_another(tmp_path: Path) -> None:
    one = compiled(tmp_path, "one", "int f(int x) { return x > 1; }\nint table[2] = {1, 2};\n")
    again = compiled(tmp_path, "again", "int f(int x) { return x > 1; }\nint table[2] = {1, 2};\n")
    boundary = compiled(tmp_path, "boundary", "int f(int x) { return x >= 1; }\nint table[2] = {1, 2};\n")
    data = compiled(tmp_path, "data", "int f(int x) { return x > 1; }\nint table[2] = {1, 3};\n")
    assert code_digest(one) == code_digest(again) != ""
    assert code_digest(boundary) != code_digest(one)
    assert code_digest(data) != code_digest(one)  # .data counts: a table's value is behaviour too


def test_an_image_that_is_no_elf_proves_nothing(tmp_path: Path) -> None:
    bz = tmp_path / "bzImage"
    bz.write_bytes(b"MZ\x00\x00not an ELF")
    assert code_digest(bz) == ""


def test_the_build_identity_is_the_trees_commit(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "f").write_text("x")
    env = {"GIT_COMMITTER_DATE": "Mon, 30 Nov 2026 00:00:00 +0000", "GIT_AUTHOR_DATE": "Mon, 30 Nov 2026 00:00:00 +0000",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "-C", str(tmp_path), "add", "f"], check=True, env=env)
    subprocess.run(["git", "-C", str(tmp_path), "commit", "-qm", "base"], check=True, env=env)
    identity = pinned_identity(tmp_path)
    assert identity["KBUILD_BUILD_TIMESTAMP"] == "Mon, 30 Nov 2026 00:00:00 +0000"
    assert identity["KBUILD_BUILD_USER"] == identity["KBUILD_BUILD_HOST"] == "sigwake"
    assert identity["KBUILD_BUILD_VERSION"] == "1"
