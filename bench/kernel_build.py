#!/usr/bin/python3
"""Prints kernel build figures on Debian's linux-source-6.1 with sigwake's default
fragments: a cold build (empty ccache, new object directory), a build with a warm
ccache into a new object directory, an incremental build after a change to
kernel/events/ring_buffer.c, and the bzImage and PVH vmlinux boot-to-power-off
seconds of the result. With --bisect N, the builds a bisection over N commits
took, next to log2(N).

    bench/kernel_build.py [--jobs N] [--bisect N]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

from sigwake.programs import binaries  # noqa: E402
from sigwake.kernels import kconfig  # noqa: E402
from sigwake.targets import qemu  # noqa: E402
from sigwake.kernels import source_tree  # noqa: E402
from sigwake.commands.bisect import Probe, bisect_tree  # noqa: E402
from sigwake.kernels.build import BuildRequest, KernelBuilder, git  # noqa: E402
from sigwake.commands.cli import REPO, default_cache  # noqa: E402
from sigwake.targets.options import RunOptions  # noqa: E402
from sigwake.targets.registry import QemuTarget  # noqa: E402
from sigwake.kernels.kernels import KernelCache, file_kernel  # noqa: E402
from sigwake.core.progress import Progress  # noqa: E402

FIX = REPO / "harness/tests/kernel-patches/0001-perf-ring_buffer-signal-FASYNC-readers-at-watermark-wakeups-6.1.patch"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--bisect", type=int, default=0, metavar="N")
    args = parser.parse_args()
    quiet = Progress(quiet=True)
    fragments = tuple(kconfig.default_fragments(REPO / "kernel-configs"))
    with tempfile.TemporaryDirectory(prefix="sigwake-bench-") as tmp:
        work = Path(tmp)
        tree = source_tree.unpack(KernelCache(default_cache()), "6.1", work / "tree", quiet)
        base = git(tree, "rev-parse", "HEAD").strip()
        ccache = work / "ccache"
        jobs = {"jobs": args.jobs} if args.jobs else {}

        cold = KernelBuilder(work / "cold", ccache=ccache, **jobs).build(BuildRequest(tree, fragments), quiet)
        warm = KernelBuilder(work / "warm", ccache=ccache, **jobs)
        warm_built = warm.build(BuildRequest(tree, fragments), quiet)
        with (tree / "kernel/events/ring_buffer.c").open("a") as f:
            f.write("/* bench: touched */\n")
        source_tree.commit_all(tree, "touch ring_buffer.c")
        incremental = warm.build(BuildRequest(tree, fragments), quiet)
        print(f"linux-source-6.1, {warm.jobs} jobs, fragments {', '.join(f.stem for f in fragments)}")
        print(f"  cold build (empty ccache):          {cold.seconds:7.1f} s")
        print(f"  new object dir, warm ccache:        {warm_built.seconds:7.1f} s")
        print(f"  incremental, ring_buffer.c touched: {incremental.seconds:7.1f} s")

        accel = qemu.choose_accel(None)
        built = binaries.build(REPO, REPO / "build", quiet)
        config = RunOptions(accel, privileges=("root",), repeat=1)
        # The builds made the PVH vmlinux; the bzImage of the same objects, for comparison.
        objects = warm.make(tree, ["bzImage"], work / "bzImage.log", quiet)
        for label, image in (("bzImage", objects / "arch/x86/boot/bzImage"), ("vmlinux (PVH)", objects / "vmlinux")):
            seconds = []
            for _ in range(3):
                start = time.monotonic()
                target = QemuTarget(file_kernel(image), built.initramfs(work / "guest.cpio"), mode="poweroff")
                off = target.run(built, config, work / "console.log")
                seconds.append(time.monotonic() - start if off.boot.status == "ok" else float("nan"))
            print(f"  boot to power-off, {label:14} {sorted(seconds)[1]:5.2f} s ({accel.name})")

        if args.bisect >= 3:
            git(tree, "reset", "-q", "--hard", base)
            for i in range(args.bisect):
                if i == args.bisect // 2:
                    source_tree.apply_mail(tree, FIX)
                else:
                    with (tree / "kernel/sys.c").open("a") as f:
                        f.write(f"/* bench: unrelated {i} */\n")
                    source_tree.commit_all(tree, f"unrelated {i}")
            probe = Probe(built.select(["watermark_sigio"]), "watermark_sigio", "watermark_sigio",
                          RunOptions(accel, privileges=("root",), repeat=3), work)
            report = bisect_tree(warm, tree, fragments, base, "HEAD", probe, quiet)
            print(f"  bisection over {args.bisect} commits: {len(report.steps)} builds ({len(report.steps) - 2} "
                  f"steps + 2 endpoints); log2({args.bisect}) = {math.log2(args.bisect):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
