"""KVM or TCG, decided by evidence."""

import pytest

from sigwake.targets.qemu import choose_accel, command, BootRequest, Accel
from pathlib import Path


def test_no_virtualisation_flags_means_tcg() -> None:
    accel = choose_accel(None, "processor\t: 0\nflags\t\t: fpu sse2 hypervisor\n")
    assert accel.name == "tcg" and "vmx" in accel.reason


def test_override_wins_and_is_said() -> None:
    assert choose_accel("tcg", "flags\t: vmx") == Accel("tcg", "chosen with --accel")
    assert choose_accel("kvm", "flags\t: fpu").name == "kvm"
    with pytest.raises(ValueError):
        choose_accel("hvf")


def test_this_host_runs_tcg() -> None:
    # The development and CI hosts are guests without vmx/svm: KVM there aborts or crawls.
    flags = Path("/proc/cpuinfo").read_text()
    if " vmx" in flags or " svm" in flags:
        pytest.skip("this host exposes vmx/svm: the automatic choice may rightly be KVM")
    assert choose_accel(None).name == "tcg"


def test_every_boot_is_isolated() -> None:
    argv = command(BootRequest(Path("k"), Path("i"), ("x=1",), Accel("tcg", ""), 5.0), Path("log"))
    joined = " ".join(argv)
    for flag in ("-nic none", "-no-reboot", "-accel tcg", "-display none"):
        assert flag in joined
    assert "panic=-1" in argv[argv.index("-append") + 1]
    assert "-cpu" not in argv  # TCG runs QEMU's default CPU model


def test_a_foreign_architecture_under_tcg_stretches_every_deadline() -> None:
    from sigwake.core.debian_names import HOST_ARCH
    from sigwake.targets.options import RunOptions
    from sigwake.targets.registry import FOREIGN_TCG_SLOWDOWN, options_for_arch
    native = RunOptions(Accel("tcg", ""), repro_timeout_ms=10_000)
    assert options_for_arch(native, HOST_ARCH, None) == native
    foreign = options_for_arch(native, "arm64" if HOST_ARCH != "arm64" else "amd64", "tcg")
    assert foreign.repro_timeout_ms == 10_000 * FOREIGN_TCG_SLOWDOWN
    assert foreign.silence_s > native.silence_s and foreign.timeout_for(3) > native.timeout_for(3)
    assert options_for_arch(foreign, "arm64" if HOST_ARCH != "arm64" else "amd64", "tcg") == foreign  # once
