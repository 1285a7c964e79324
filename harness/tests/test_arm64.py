"""arm64: the programs cross-built by Meson (Debian's cross toolchain, the target's
libbpf/libelf/zlib/zstd unpacked into a sysroot), Debian's arm64 kernels booted
under qemu-system-aarch64 (virt, TCG here), judged as amd64's are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from sigwake.programs.catalogue import Catalogue
from sigwake.programs import initramfs
from sigwake.targets import qemu
from sigwake.core.debian_names import HOST_ARCH
from sigwake.judge.judgement import findings
from sigwake.programs.binaries import build_for
from sigwake.commands.bisect import debian_packages
from sigwake.kernels.build import BuildError
from sigwake.commands.cli import REPO, main
from sigwake.kernels.cross import CrossTarget, cross_file
from sigwake.kernels.kernels import KernelCache, KernelSpecError, default_kernels, file_kernel
from sigwake.commands.orchestrator import RunConfig, RunSummary, run_kernels
from sigwake.core.progress import Progress
from sigwake.core.verdicts import Verdict
from image_files import corrupt_bzimage

EM_AARCH64 = 183


def test_a_missing_cross_toolchain_or_qemu_is_named(tmp_path: Path) -> None:
    absent = CrossTarget("arm64", "nowhere-linux-gnu", "aarch64", "g++-nowhere-linux-gnu")
    with pytest.raises(BuildError, match="needs Debian's g\\+\\+-nowhere-linux-gnu"):
        cross_file(absent, tmp_path, tmp_path / "x.ini", Progress(quiet=True))
    assert qemu.missing_qemu("riscv64") == "sigwake knows no QEMU machine for riscv64 (it boots amd64, arm64)"
    with pytest.raises(ValueError, match="cannot use KVM"):
        qemu.choose_accel("kvm", arch="arm64" if HOST_ARCH == "amd64" else "amd64")


def test_an_arm64_image_file_is_known_by_its_header(tmp_path: Path) -> None:
    image = tmp_path / "Image"
    image.write_bytes(bytes(56) + b"ARM\x64" + bytes(8))
    assert file_kernel(image).arch == "arm64"
    image.write_bytes(corrupt_bzimage(4096))
    assert file_kernel(image).arch == "amd64"
    image.write_bytes(bytes(64))  # no header at all: refused before anything boots
    with pytest.raises(KernelSpecError, match="is not a kernel image"):
        file_kernel(image)


@pytest.mark.slow
def test_arm64_kernels_are_judged_as_amd64_kernels_are(cache_root: Path, tmp_path: Path,
                                                       local_run: RunSummary, catalogue: Catalogue) -> None:
    built = build_for("arm64", REPO, REPO / "build", cache_root, Progress(quiet=True))
    for program in (built.init, *built.reproducers.values()):
        assert int.from_bytes(program.read_bytes()[18:20], "little") == EM_AARCH64, program  # ELF e_machine

    cache = KernelCache(cache_root)
    queries = [q for q in default_kernels("generic", "arm64") if q.suite in ("bookworm", "trixie")]
    specs = tuple(f"{q.suite}:{cache.newest(q, Progress(quiet=True)).name}" for q in queries)
    summary = run_kernels(RunConfig(REPO, REPO / "build", cache_root, tmp_path / "results", specs, repeat=1, jobs=2),
                          Progress(quiet=True))
    assert summary.failures == []
    old, new = summary.results
    assert (old.origin.arch, new.origin.arch) == ("arm64", "arm64") and old.runner.accel_reason
    for result, verdict in ((old, Verdict.NOT_DELIVERED), (new, Verdict.DELIVERED)):
        assert result.boot.status == "ok", result.boot.detail
        root = {c.name: c for c in result.reproducers if c.privilege == "root"}
        assert root["watermark_sigio"].verdict == verdict
        # The findings there may be are fixes the kernel lacks: the SIGTRAP after exec (every Debian kernel before
        # 6.12.118) and, on 6.1, kernel callchains' access check and the refusal of an exited group leader.
        assert all(": missing fix: " in f.text for f in findings([result], catalogue)), findings([result], catalogue)
        # The kernel-path tracer's kprobes work on arm64: the chain is counted where it runs.
        assert isinstance(root["watermark_sigio"].kernel_path.get("perf_event_wakeup"), int)
    # A bisection over arm64's packages reads arm64's archive (each suite's arm64 apt state).
    packages = debian_packages(cache, "rt-arm64", Progress(quiet=True))
    assert len(packages) > 2 and all(p.arch == "arm64" and p.name.endswith("-rt-arm64") for p in packages)
    # The same cases, in the same passes, reach the same verdicts as amd64's 6.1 does here.
    amd64_61 = next(r for r in local_run.results if r.release and r.release.startswith("6.1."))
    assert {(c.privilege, c.name): c.verdict for c in old.reproducers} == \
           {(c.privilege, c.name): c.verdict for c in amd64_61.reproducers}


@pytest.mark.slow
def test_a_lava_job_for_an_arm64_kernel_carries_arm64_programs(tmp_path: Path) -> None:
    image = tmp_path / "Image"
    image.write_bytes(bytes(56) + b"ARM\x64" + bytes(8))  # an arm64 Image by its header; never booted here
    assert main(["lava-jobs", str(tmp_path / "jobs"), "--kernel", str(image), "--repeat", "1"]) == 0
    [(kernel_id, entry)] = json.loads((tmp_path / "jobs" / "jobs.json").read_text()).items()
    job = yaml.safe_load((tmp_path / "jobs" / entry["definition"]).read_text())
    assert job["context"]["arch"] == "arm64" and "console=ttyAMA0" in \
        job["actions"][0]["deploy"]["images"]["kernel"]["image_arg"]
    initrd = Path(job["actions"][0]["deploy"]["images"]["initrd"]["url"].removeprefix("file://"))
    init = {e.path: e.data for e in initramfs.decode(initrd.read_bytes())}["init"]
    assert int.from_bytes(init[18:20], "little") == EM_AARCH64
