#!/usr/bin/python3
"""Prints, per case, how often repeated runs disagreed: every case --native times
natively on this host (each run its own process), and --guest times in one boot
of a Debian kernel. Goal: 0 everywhere; a flaky case is a defect to fix.

    bench/soak.py [--native N] [--guest N] [--kernel SPEC] [--passes P,...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

from sigwake.programs import binaries  # noqa: E402
from sigwake.targets import qemu  # noqa: E402
from sigwake.commands.cli import REPO, default_cache  # noqa: E402
from sigwake.targets.options import RunOptions  # noqa: E402
from sigwake.kernels.kernels import DEFAULT_KERNELS, KernelCache, host_kernel  # noqa: E402
from sigwake.targets.registry import HostTarget, QemuTarget  # noqa: E402
from sigwake.core.progress import Progress  # noqa: E402
from sigwake.core.model import ReproResult  # noqa: E402


def disagreements(runs: dict[str, int]) -> int:
    return sum(runs.values()) - max(runs.values(), default=0)


def print_table(title: str, results: list[ReproResult], seconds: float) -> None:
    print(f"## {title} ({seconds:.0f} s)\n\n| case | pass | runs | outcomes | disagreements |\n|---|---|---|---|---|")
    for r in sorted(results, key=lambda r: (r.privilege, r.name)):
        outcomes = ", ".join(f"{v} x{n}" for v, n in Counter(r.runs).most_common())
        print(f"| {r.name} | {r.privilege} | {sum(r.runs.values())} | {outcomes} | {disagreements(r.runs)} |")
    print(f"\ntotal disagreements: {sum(disagreements(r.runs) for r in results)}\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--native", type=int, default=1000, help="runs of each case on this host (0: none)")
    parser.add_argument("--guest", type=int, default=200, help="runs of each case in one boot (0: none)")
    parser.add_argument("--kernel", help="a Debian package or an image path (default: trixie's newest of the set)")
    parser.add_argument("--passes", default="root")
    args = parser.parse_args()
    progress = Progress()
    built = binaries.build(REPO, REPO / "build", progress)
    if args.native:
        config = RunOptions(qemu.Accel("none", "native"), repeat=args.native, agree=args.native, privileges=tuple(args.passes.split(",")))
        with tempfile.TemporaryDirectory(prefix="sigwake-soak-") as tmp:
            start = time.monotonic()
            outcome = HostTarget(host_kernel()).run(built, config, Path(tmp) / "console.log")
        print_table(f"natively, {args.native} runs per case", outcome.reproducers, time.monotonic() - start)
    if args.guest:
        cache = KernelCache(default_cache())
        if args.kernel:
            (kernel,) = cache.resolve(args.kernel, progress)
        else:
            kernel = cache.fetch(cache.newest(next(q for q in DEFAULT_KERNELS if q.suite == "trixie"), progress), progress)
        config = RunOptions(qemu.choose_accel(None), repeat=args.guest, agree=args.guest, privileges=tuple(args.passes.split(",")))
        with tempfile.TemporaryDirectory(prefix="sigwake-soak-") as tmp:
            initrd = built.initramfs(Path(tmp) / "guest.cpio")
            start = time.monotonic()
            outcome = QemuTarget(kernel, initrd).run(built, config, Path(tmp) / "console.log")
            print_table(f"{kernel.id}, {args.guest} runs per case in one boot ({outcome.boot.status})",
                        outcome.reproducers, time.monotonic() - start)
    return 0


if __name__ == "__main__":
    sys.exit(main())
