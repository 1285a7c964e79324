"""Shared fixtures: the built reproducers, the kernel cache and the accelerator."""

from __future__ import annotations

from pathlib import Path

import pytest

from sigwake.programs import binaries
from sigwake.targets import qemu
from sigwake.programs.catalogue import Catalogue
from sigwake.kernels.kernels import DEFAULT_KERNELS, Kernel, KernelCache
from sigwake.commands.cli import REPO, default_cache
from sigwake.commands.orchestrator import RunConfig, RunSummary, run_kernels
from sigwake.core.progress import Progress
from sigwake.reports.report import ReportOptions, write_reports


@pytest.fixture(scope="session")
def built() -> binaries.Binaries:
    return binaries.build(REPO, REPO / "build", Progress(quiet=True))


@pytest.fixture(scope="session")
def catalogue(built: binaries.Binaries) -> Catalogue:
    """Every case's facts, as the built programs declare them."""
    return built.catalogue


@pytest.fixture(scope="session")
def initrd(built: binaries.Binaries, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built.initramfs(tmp_path_factory.mktemp("initramfs") / "guest.cpio")


@pytest.fixture(scope="session")
def accel() -> qemu.Accel:
    return qemu.choose_accel(None)


@pytest.fixture(scope="session")
def cache_root() -> Path:
    return default_cache()


def _debian_kernel(cache_root: Path, suite: str) -> Kernel:
    cache = KernelCache(cache_root)
    query = next(q for q in DEFAULT_KERNELS if q.suite == suite)
    return cache.fetch(cache.newest(query, Progress(quiet=True)), Progress(quiet=True))


@pytest.fixture(scope="session")
def kernel_6_1(cache_root: Path) -> Kernel:
    """Debian 12's newest 6.1: before the fix (v6.10)."""
    return _debian_kernel(cache_root, "bookworm")


@pytest.fixture(scope="session")
def kernel_6_12(cache_root: Path) -> Kernel:
    """Debian 13's newest 6.12: after the fix."""
    return _debian_kernel(cache_root, "trixie")


def spec(kernel: Kernel) -> str:
    return f"{kernel.origin.suite}:{kernel.origin.package}"


@pytest.fixture(scope="session")
def local_results_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("results")


@pytest.fixture(scope="session")
def local_run(kernel_6_1: Kernel, kernel_6_12: Kernel, cache_root: Path, local_results_dir: Path,
              catalogue: Catalogue) -> RunSummary:
    """Both Debian kernels under QEMU here with the defaults: what every other target must agree with."""
    config = RunConfig(REPO, REPO / "build", cache_root, local_results_dir, (spec(kernel_6_1), spec(kernel_6_12)))
    summary = run_kernels(config, Progress(quiet=True))
    write_reports(local_results_dir, ReportOptions(), catalogue)  # as `sigwake run` does after the run
    return summary


@pytest.fixture(scope="session")
def test_programs() -> dict[str, Path]:
    """Misbehaving stand-ins for reproducers (repro/tests/hang.cc, crash.cc, silent.cc, liar.cc, forge.cc,
    provoke.cc, sysrq_crash.cc, alternate.cc)."""
    return {name: REPO / "build" / "repro" / "tests" / f"sigwake-test-{name}"
            for name in ("hang", "crash", "silent", "liar", "forge", "provoke", "sysrq_crash", "alternate")}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: builds kernels from source (minutes); select with -m slow, skip with -m 'not slow'")
    config.addinivalue_line("markers", "xdist_group(name): tests that share a costly session fixture, kept on "
                                       "one pytest-xdist worker (./sigwake test runs two, --dist loadgroup)")


# The costliest groups first, so that with two workers neither waits alone at the end: the kernel-source
# tests (one tree, built cold once, about 40 min here) and the tests that share the session's local run.
GROUPS_FIRST = ("kernel-source", "local-run")


def group_of(item: pytest.Item) -> str | None:
    mark = item.get_closest_marker("xdist_group")
    return str(mark.args[0]) if mark is not None else None


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which names each item's worker group from its mark
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test that uses local_run joins its group (computed once, on one worker); the groups go first."""
    for item in items:
        if "local_run" in getattr(item, "fixturenames", ()) and group_of(item) is None:
            item.add_marker(pytest.mark.xdist_group("local-run"))
    rank = {name: i for i, name in enumerate(GROUPS_FIRST)}
    items.sort(key=lambda item: rank.get(group_of(item) or "", len(GROUPS_FIRST)))  # stable: file order kept
