#!/usr/bin/python3
"""Prints, per kernel, what each run of the case loop costs before its case does anything, measured in a guest
by repro/tests/run_cost_init.cc (medians, the kinds sampled in turns): the runner's process (fork, exec of a
static program that exits at once, the reap and the sweep), its confinement, a reproducer's start as root and
as the user passes' uid, the console's microseconds per KiB of frames, the printk mark said as each run starts and
ends, and the kernel-path tracer's load. With --console (a boot's console log, e.g. from results/), it prints
that boot's runs and console bytes and the least its passes could take at these costs, with no case doing
anything: the floor under bench/boot_to_verdict.py's passes, beside the kernel's bare boot (an init that powers
off at once).

    bench/run_cost.py [--kernel SPEC ...] [--console LOG]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

from sigwake.commands.cli import REPO, default_cache  # noqa: E402
from sigwake.core.progress import Progress  # noqa: E402
from sigwake.kernels.kernels import KernelCache, expand_specs  # noqa: E402
from sigwake.parse import console, ktap  # noqa: E402
from sigwake.programs import binaries, initramfs  # noqa: E402
from sigwake.targets import qemu  # noqa: E402
from sigwake.targets.options import RunOptions  # noqa: E402
from sigwake.targets.registry import QemuTarget  # noqa: E402

FIGURE = re.compile(r"sigwake-run-cost: (\w+)=(\d+)")
REPRODUCER = "watermark_sigio"  # the one whose --list is timed (run_cost_init.cc)


def guest_image(build_dir: Path, work: Path) -> Path:
    repro = build_dir / "repro"
    entries = [initramfs.directory(d) for d in ("dev", "proc", "sys", "repro")]
    entries += [initramfs.char_device("dev/console", 5, 1),
                initramfs.executable("init", (repro / "sigwake-run-cost-init").read_bytes()),
                initramfs.executable(f"repro/{REPRODUCER}", (repro / REPRODUCER).read_bytes())]
    return initramfs.write(entries, work / "run-cost.cpio")


def measure(image: Path, initrd: Path, work: Path) -> dict[str, int]:
    request = qemu.BootRequest(image, initrd, (), qemu.choose_accel(None), timeout_s=600, silence_s=120)
    captured = qemu.boot(request, work / "run-cost.console.log")
    return {m[1]: int(m[2]) for m in FIGURE.finditer(captured.console)}


def boot_counts(log: Path) -> tuple[int, dict[str, int], int]:
    """A boot's runs that ran (not those left out as unneeded), per pass, and its console's bytes."""
    text = log.read_text(errors="replace")
    unframed = console.unframe(text, console.likeliest_token(text))
    report = ktap.parse_runner(unframed.payloads, unframed.lines)
    per_pass: dict[str, int] = {}
    for run in report.runs:
        per_pass[run.privilege] = per_pass.get(run.privilege, 0) + 1
    return len(report.runs), per_pass, len(text.encode())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernel", action="append", dest="kernels")
    parser.add_argument("--console", type=Path, help="a boot's console log: its runs and bytes, and their floor")
    args = parser.parse_args()
    quiet = Progress(quiet=True)
    built = binaries.build(REPO, REPO / "build", quiet)
    cache = KernelCache(default_cache())
    counts = boot_counts(args.console) if args.console else None
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        initrd = guest_image(REPO / "build", work)
        guest = built.initramfs(work / "guest.cpio")
        for spec in expand_specs(tuple(args.kernels or ["default"]), ("generic",)):
            for kernel in cache.resolve(spec, quiet):
                if kernel.image is None:
                    continue  # the host boots nothing
                figures = measure(kernel.image, initrd, work)
                if "done" not in figures:
                    print(f"{kernel.id}: the guest did not finish; figures: {figures}")
                    continue
                print(f"{kernel.id}: a run's process {figures['process_us'] / 1000:.2f} ms (fork, exec of a static "
                      f"program that exits, reap, sweep), confined {figures['confined_process_us'] / 1000:.2f} ms; a "
                      f"reproducer's --list confined {figures['confined_reproducer_list_us'] / 1000:.2f} ms, as the "
                      f"user passes' uid {figures['confined_nobody_reproducer_list_us'] / 1000:.2f} ms; console "
                      f"{figures['console_us_per_kib'] / 1000:.2f} ms per KiB of frames; printk mark "
                      f"{figures['printk_mark_us']} us; the tracer's load {figures['tracer_load_us'] / 1e6:.2f} s")
                bare = QemuTarget(kernel, guest, mode="poweroff").run(built, RunOptions(qemu.choose_accel(None)),
                                                                       work / "bare.console.log")
                print(f"  bare boot {bare.boot.seconds or 0.0:.2f} s")
                if counts is not None:
                    runs, per_pass, size = counts
                    root = per_pass.get("root", 0)
                    floor_s = (root * figures["confined_reproducer_list_us"]
                               + (runs - root) * figures["confined_nobody_reproducer_list_us"]
                               + size / 1024 * figures["console_us_per_kib"]
                               + 2 * runs * figures["printk_mark_us"]) / 1e6
                    print(f"  {args.console.name}: {runs} runs ({', '.join(f'{p} {n}' for p, n in per_pass.items())}), "
                          f"{size / 1024:.0f} KiB of console: its passes take at least {floor_s:.1f} s at these "
                          f"costs, with no case doing anything")
    return 0


if __name__ == "__main__":
    sys.exit(main())
