#!/usr/bin/python3
"""Prints, per kernel, the median seconds from QEMU start to the last verdict next
to the bare boot (an init that powers off at once) of the same kernel, the uptime
at which /init starts, and each reproducer's in-guest duration.

    bench/boot_to_verdict.py [--boots N] [--kernel SPEC ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

from sigwake import binaries, qemu  # noqa: E402
from sigwake.cli import REPO, default_cache  # noqa: E402
from sigwake.guest import GuestConfig, run_guest  # noqa: E402
from sigwake.kernels import KernelCache  # noqa: E402
from sigwake.progress import Progress  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--boots", type=int, default=3)
    parser.add_argument("--kernel", action="append", dest="kernels")
    parser.add_argument("--accel", choices=("auto", "kvm", "tcg"), default="auto")
    args = parser.parse_args()

    quiet = Progress(quiet=True)
    built = binaries.build(REPO, REPO / "build", quiet)
    accel = qemu.choose_accel(args.accel)
    config = GuestConfig(accel)
    cache = KernelCache(default_cache())
    names = sorted(built.reproducers)
    print(f"accelerator: {accel.name} ({accel.reason}); {args.boots} boots per kernel and mode; medians")
    print(f"{'kernel':28} {'verdicts s':>10} {'bare boot s':>11} {'/init at ms':>11}  in-guest ms per reproducer")
    with tempfile.TemporaryDirectory() as tmp:
        initrd = built.initramfs(Path(tmp) / "guest.cpio")
        for spec in args.kernels or ["default"]:
            for kernel in cache.resolve(spec, quiet):
                if kernel.native:
                    continue
                full: list[float] = []
                bare: list[float] = []
                uptime: list[float] = []
                per_repro: dict[str, list[float]] = {n: [] for n in names}
                for _ in range(args.boots):
                    run = run_guest(kernel, initrd, names, config, Path(tmp) / "console.log")
                    off = run_guest(kernel, initrd, [], config, Path(tmp) / "console.log", mode="poweroff")
                    if run.boot.status != "ok" or off.boot.status != "ok" or off.boot.init_uptime_ms is None:
                        print(f"{kernel.id}: boot {run.boot.status}/{off.boot.status}: {run.boot.detail}")
                        break
                    full.append(run.boot.seconds or 0.0)
                    bare.append(off.boot.seconds or 0.0)
                    uptime.append(off.boot.init_uptime_ms)
                    for r in run.reproducers:
                        per_repro[r.name].append(r.duration_ms or 0.0)
                if not full:
                    continue
                repro = "  ".join(f"{n}={statistics.median(v):.0f}" for n, v in per_repro.items())
                print(f"{kernel.id:28} {statistics.median(full):10.2f} {statistics.median(bare):11.2f} "
                      f"{statistics.median(uptime):11.0f}  {repro}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
