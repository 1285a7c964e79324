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


def make_deb(root: Path, files: dict[str, bytes], name: str = "linux-image-test", arch: str = "amd64") -> Path:
    tree = root / "tree"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN" / "control").write_text(
        f"Package: {name}\nVersion: 1.0\nArchitecture: {arch}\nMaintainer: t <t@t>\nDescription: test\n")
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


def test_a_local_package_file_is_a_kernel_named_apart_from_other_builds(tmp_path: Path) -> None:
    image = corrupt_bzimage(4096)
    deb = make_deb(tmp_path, {"boot/vmlinuz-6.12.0-test-amd64": image}, "linux-image-6.12.0-test-amd64")
    cache = KernelCache(tmp_path / "cache")
    (k,) = cache.resolve(str(deb), Progress(quiet=True))
    assert k.image is not None and k.image.read_bytes() == image and k.arch == "amd64"
    assert k.id == f"deb-6.12.0-test-amd64-{sha256_of(deb)[:8]}"  # not Debian's own 6.12.0-test-amd64
    assert (k.origin.kind, k.origin.package, k.origin.version, k.origin.suite, k.origin.path, k.origin.sha256) == (
        "debian", "linux-image-6.12.0-test-amd64", "1.0", "local", str(deb.resolve()), sha256_of(k.image))
    assert cache.resolve(str(deb), Progress(quiet=True)) == [k]  # extracted once


def test_a_local_package_that_is_no_kernel_is_refused_before_booting(tmp_path: Path) -> None:
    cache = KernelCache(tmp_path / "cache")
    damaged = tmp_path / "damaged.deb"
    damaged.write_bytes(make_deb(tmp_path / "a", {"boot/vmlinuz-x": b"x" * 4096}).read_bytes()[:300])
    with pytest.raises(KernelSpecError, match=r"damaged.deb is not a Debian package \(dpkg-deb: error: .*\): not booted"):
        cache.resolve(str(damaged), Progress(quiet=True))
    whole = make_deb(tmp_path / "d", {"boot/vmlinuz-x": os.urandom(1 << 16)}).read_bytes()
    damaged.write_bytes(whole[:len(whole) // 2])  # its control intact, its files cut
    with pytest.raises(DebianError, match="damaged.deb: its files cannot be read"):
        cache.resolve(str(damaged), Progress(quiet=True))
    riscv = make_deb(tmp_path / "b", {"boot/vmlinuz-x": b"x"}, arch="riscv64")
    with pytest.raises(KernelSpecError, match="a package for riscv64; sigwake boots amd64, arm64"):
        cache.resolve(str(riscv), Progress(quiet=True))
    with pytest.raises(DebianError, match="no kernel image"):
        cache.resolve(str(make_deb(tmp_path / "c", {"usr/share/doc/x/copyright": b"c"})), Progress(quiet=True))
    with pytest.raises(KernelSpecError, match="no package file"):
        cache.resolve(str(tmp_path / "missing.deb"), Progress(quiet=True))


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
