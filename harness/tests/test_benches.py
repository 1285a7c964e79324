"""Every bench (bench/*.py) starts: its imports and its options hold (`--help`), so a change elsewhere cannot
break one silently; the two that answer in seconds run for real, at their smallest, and print their figures.
The others' real runs are long scores (minutes to hours: whole QA rounds, kernel builds, mutant scores), run
as benches, not tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sigwake.kernels.kernels import Kernel

BENCH = Path(__file__).resolve().parents[2] / "bench"


def bench(name: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCH / name), *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("name", sorted(p.name for p in BENCH.glob("*.py")))
def test_every_bench_starts_and_says_its_options(name: str) -> None:
    done = bench(name, "--help")
    assert done.returncode == 0 and "usage:" in done.stdout, done.stderr[-2000:]


def test_boot_to_verdict_prints_its_figures_for_one_kernel(kernel_6_12: Kernel) -> None:
    spec = f"{kernel_6_12.origin.suite}:{kernel_6_12.origin.package}"
    done = bench("boot_to_verdict.py", "--boots", "1", "--repeat", "1", "--kernel", spec, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{kernel_6_12.id}: " in done.stdout and "s to the last verdict, bare boot" in done.stdout, done.stdout
    assert "bisection probe (watermark_sigio, root): " in done.stdout, done.stdout


def test_run_cost_prints_a_runs_costs_and_a_boots_floor(kernel_6_12: Kernel) -> None:
    spec = f"{kernel_6_12.origin.suite}:{kernel_6_12.origin.package}"
    framed = Path(__file__).parent / "data" / "consoles" / "framed.log"  # a boot's console, real frames
    done = bench("run_cost.py", "--kernel", spec, "--console", str(framed), timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"{kernel_6_12.id}: a run's process " in done.stdout and "the tracer's load" in done.stdout, done.stdout
    assert "bare boot " in done.stdout, done.stdout
    assert "framed.log: " in done.stdout and "its passes take at least" in done.stdout, done.stdout


@pytest.mark.xdist_group("host-perf")  # every reproducer natively: with the other host tests (test_native.py)
def test_soak_prints_its_table_natively() -> None:
    done = bench("soak.py", "--native", "2", "--guest", "0", timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "natively, 2 runs per case" in done.stdout and "total disagreements:" in done.stdout, done.stdout
