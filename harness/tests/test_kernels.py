"""Kernel specs and Debian packages: what --kernel accepts and what a package yields."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from sigwake.kernels.debian import IMAGE_MEMBER, DebianError, extract_image
from sigwake.core.debian_names import as_glob
from sigwake.kernels.kernels import DEFAULT_KERNELS, KernelCache, KernelSpecError, default_kernels, sha256_of
from sigwake.core.progress import Progress
from image_files import corrupt_bzimage


def make_deb(root: Path, files: dict[str, bytes], name: str = "linux-image-test") -> Path:
    tree = root / "tree"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN" / "control").write_text(
        f"Package: {name}\nVersion: 1.0\nArchitecture: amd64\nMaintainer: t <t@t>\nDescription: test\n")
    for path, data in files.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_bytes(data)
    deb = root / f"{name}.deb"
    subprocess.run(["dpkg-deb", "--build", "-Zgzip", str(tree), str(deb)], check=True, capture_output=True)
    return deb


def test_image_paths_of_old_and_new_debian_layouts() -> None:
    assert IMAGE_MEMBER.match("./boot/vmlinuz-6.1.0-57-amd64")
    assert IMAGE_MEMBER.match("./usr/lib/modules/7.2.13+deb14-amd64/vmlinuz")
    assert not IMAGE_MEMBER.match("./boot/config-6.1.0-57-amd64")
    assert not IMAGE_MEMBER.match("./usr/lib/modules/7.2.13/kernel/vmlinuz/x.ko")


@pytest.mark.parametrize("member", ["boot/vmlinuz-6.1.0-test", "usr/lib/modules/7.2.0-test/vmlinuz"])
def test_only_the_image_is_extracted(tmp_path: Path, member: str) -> None:
    image = os.urandom(4096)
    deb = make_deb(tmp_path, {"boot/System.map-x": b"map", member: image, "usr/lib/modules/x/foo.ko": b"ko"})
    out = extract_image(deb, tmp_path / "vmlinuz")
    assert out.read_bytes() == image
    assert sorted(p.name for p in tmp_path.iterdir()) == ["linux-image-test.deb", "tree", "vmlinuz"]


def test_a_package_without_an_image_is_refused(tmp_path: Path) -> None:
    deb = make_deb(tmp_path, {"usr/share/doc/x/copyright": b"c"})
    with pytest.raises(DebianError, match="no kernel image"):
        extract_image(deb, tmp_path / "vmlinuz")


def test_specs_that_name_nothing_are_refused(tmp_path: Path) -> None:
    cache = KernelCache(tmp_path)
    with pytest.raises(KernelSpecError, match="no kernel image"):
        cache.resolve(str(tmp_path / "missing" / "vmlinuz"), Progress(quiet=True))
    with pytest.raises(KernelSpecError, match="expected default, host"):
        cache.resolve("not a kernel", Progress(quiet=True))


def test_host_and_file_specs(tmp_path: Path) -> None:
    cache = KernelCache(tmp_path)
    (host,) = cache.resolve("host", Progress(quiet=True))
    assert host.image is None and host.id == f"host-{os.uname().release}"
    image = tmp_path / "bzImage"
    image.write_bytes(corrupt_bzimage(4096))
    (k,) = cache.resolve(str(image), Progress(quiet=True))
    assert k.image is not None and k.origin.sha256 == sha256_of(image) and k.id.startswith("file-bzImage-")


def test_default_set_is_the_newest_of_each_suite(cache_root: Path) -> None:
    # Real package lists: one kernel per suite, each the newest of its pattern there.
    cache = KernelCache(cache_root)
    for query in DEFAULT_KERNELS:
        newest = cache.newest(query, Progress(quiet=True))  # updates the suite's lists first
        packages = cache.suite(query.suite).packages(query.pattern)
        assert newest == packages[0] and newest.suite == query.suite
        assert all(p.name != newest.name or p.version == newest.version for p in packages)


def test_a_missing_package_is_named_without_a_raw_regex() -> None:
    # What reaches the reports when a suite lacks a flavour: a name a person reads, not the pattern behind it.
    query = next(q for q in default_kernels("16k", "arm64") if q.suite == "bookworm")
    assert as_glob(query.pattern) == "linux-image-6.1.0-*-arm64-16k"
    assert all("\\" not in as_glob(q.pattern) for f in ("generic", "rt") for q in default_kernels(f, "amd64"))
