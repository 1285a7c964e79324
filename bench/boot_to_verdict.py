#!/usr/bin/python3
"""Prints, per kernel, the median seconds from QEMU start to the last verdict next
to the bare boot (an init that powers off at once) of the same kernel, the uptime
at which /init starts, the in-guest seconds of each privilege pass (every case up
to --repeat times, adaptively: --agree), the slowest reproducers' in-guest
milliseconds, and a bisection probe's boot (the headline case alone, as root, as
`sigwake bisect` boots each step) against the bare boot. Then the boot's profile
(harness/sigwake/parse/boot_profile.py): QEMU to the kernel, the kernel to the
init, the init's setup, each pass (its runs' CPU time and waiting, and the loop
between them), the gaps between passes, what follows the last run, and the
console's bytes, each part the median of the boots, summing to the boot; and the
cases that wait longest.

    bench/boot_to_verdict.py [--boots N] [--repeat N] [--agree N] [--kernel SPEC ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

from sigwake.core import protocol  # noqa: E402
from sigwake.judge.expectations import HEADLINE  # noqa: E402
from sigwake.programs import binaries  # noqa: E402
from sigwake.targets import qemu  # noqa: E402
from sigwake.commands.cli import REPO, agree_of, default_cache  # noqa: E402
from sigwake.targets.options import RunOptions  # noqa: E402
from sigwake.targets.registry import QemuTarget  # noqa: E402
from sigwake.kernels.kernels import KernelCache, expand_specs  # noqa: E402
from sigwake.core.progress import Progress  # noqa: E402
from sigwake.parse.boot_profile import BootProfile, profile  # noqa: E402


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--boots", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=protocol.DEFAULT_REPEAT)
    parser.add_argument("--agree", type=int, default=protocol.DEFAULT_AGREE)
    parser.add_argument("--kernel", action="append", dest="kernels")
    parser.add_argument("--accel", choices=("auto", "kvm", "tcg"), default="auto")
    args = parser.parse_args()

    quiet = Progress(quiet=True)
    built = binaries.build(REPO, REPO / "build", quiet)
    accel = qemu.choose_accel(args.accel)
    config = RunOptions(accel, repeat=args.repeat, agree=agree_of(args))
    probe_config = dataclasses.replace(config, privileges=("root",))
    probe_built = built.select([HEADLINE])
    cache = KernelCache(default_cache())
    programs = sorted(built.reproducers)
    print(f"accelerator: {accel.name} ({accel.reason}); {args.boots} boots per kernel and mode; "
          f"up to {args.repeat} runs of each case of {len(programs)} reproducers per pass, stopping once "
          f"{config.agree} agree; medians")
    with tempfile.TemporaryDirectory() as tmp:
        initrd = built.initramfs(Path(tmp) / "guest.cpio")
        probe_initrd = probe_built.initramfs(Path(tmp) / "probe.cpio")
        for spec in expand_specs(tuple(args.kernels or ["default"]), ("generic",)):
            for kernel in cache.resolve(spec, quiet):
                if kernel.image is None:
                    continue  # the host boots nothing
                target, bare_target = QemuTarget(kernel, initrd), QemuTarget(kernel, initrd, mode="poweroff")
                probe_target = QemuTarget(kernel, probe_initrd)
                full: list[float] = []
                probe: list[float] = []
                bare: list[float] = []
                uptime: list[float] = []
                passes: dict[str, list[float]] = {}
                per_case: dict[str, list[float]] = {}
                profiles: list[BootProfile] = []
                for _ in range(args.boots):
                    run = target.run(built, config, Path(tmp) / "full.console.log")
                    off = bare_target.run(built, config, Path(tmp) / "console.log")
                    probed = probe_target.run(probe_built, probe_config, Path(tmp) / "console.log")
                    if probed.boot.status == "ok":
                        probe.append(probed.boot.seconds or 0.0)
                    if run.boot.status != "ok" or off.boot.status != "ok" or off.boot.init_uptime_ms is None:
                        print(f"{kernel.id}: boot {run.boot.status}/{off.boot.status}: {run.boot.detail}")
                        break
                    full.append(run.boot.seconds or 0.0)
                    profiles.append(profile((Path(tmp) / "full.console.log").read_text(errors="replace"),
                                            run.boot.seconds or 0.0))
                    bare.append(off.boot.seconds or 0.0)
                    uptime.append(off.boot.init_uptime_ms)
                    for privilege, seconds in run.boot.pass_seconds.items():
                        passes.setdefault(privilege, []).append(seconds)
                    for r in run.reproducers:
                        if r.privilege == "root" and r.duration_ms is not None:
                            per_case.setdefault(r.name, []).append(r.duration_ms)
                if not full:
                    continue
                print(f"\n{kernel.id}: {median(full):.2f} s to the last verdict, bare boot {median(bare):.2f} s, "
                      f"/init at {median(uptime):.0f} ms")
                print("  in-guest seconds per pass: "
                      + ", ".join(f"{p} {median(v):.2f}" for p, v in passes.items()))
                print(f"  bisection probe ({HEADLINE}, root): {median(probe):.2f} s, "
                      f"{median(probe) / median(bare):.2f}x the bare boot")
                slowest = sorted(per_case.items(), key=lambda kv: -median(kv[1]))[:6]
                print("  slowest programs as root, ms per run: "
                      + ", ".join(f"{name} {median(v):.0f}" for name, v in slowest))
                print_profile(profiles)
    return 0


def print_profile(profiles: list[BootProfile]) -> None:
    """Each part's median over the boots (so the medians need not sum exactly; each boot's parts do), each
    pass split into its runs' CPU and waiting and the loop between them, and the cases that wait longest."""
    parts = {name: median([p.parts().get(name, 0.0) for p in profiles]) for name in profiles[0].parts()}
    print(f"  profile, seconds (median of {len(profiles)} boots; a boot's parts sum to it): "
          + ", ".join(f"{name} {seconds:.2f}" for name, seconds in parts.items()))
    for privilege in profiles[0].passes:
        times = [p.passes[privilege] for p in profiles if privilege in p.passes]
        cpu = [t.cpu_s for t in times if t.cpu_s is not None]
        split = (f"CPU {median(cpu):.2f}, waiting {median([t.runs_s - c for t, c in zip(times, cpu)]):.2f}"
                 if len(cpu) == len(times) else "CPU not said")
        print(f"    {privilege}: runs {median([t.runs_s for t in times]):.2f} ({split}), loop between runs "
              f"{median([t.loop_s for t in times]):.2f}")
    waiting = {case: median([w for p in profiles if case in p.cases and (w := p.cases[case].waiting_s) is not None])
               for case in profiles[0].cases}
    longest = sorted(waiting.items(), key=lambda kv: -kv[1])[:8]
    print("    longest waits, s per boot: " + ", ".join(f"{case} {seconds:.2f}" for case, seconds in longest))
    print(f"    console: {median([float(p.console_bytes) for p in profiles]):.0f} bytes")


if __name__ == "__main__":
    sys.exit(main())
