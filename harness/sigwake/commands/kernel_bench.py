"""What the benches that judge patched kernels share (bench/mutants.py, bench/history.py): their
options for the kernels and passes, and from those the run options and the config fragments."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..kernels import kconfig
from ..targets import qemu
from ..targets.options import PRIVILEGES, RunOptions


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--passes", default=",".join(PRIVILEGES))
    parser.add_argument("--config", action="append", default=[], metavar="FRAGMENT",
                        help="a kernel-configs fragment (name or path) added to the defaults, e.g. lockdep")
    parser.add_argument("--cpus", type=int, default=1,
                        help="guest vCPUs (with --config smp: 2, the kernel users run; default 1)")


def run_options(args: argparse.Namespace) -> RunOptions:
    return RunOptions(qemu.choose_accel(None), repeat=args.repeat, privileges=tuple(args.passes.split(",")),
                      cpus=args.cpus)


def fragments(args: argparse.Namespace, configs: Path) -> tuple[Path, ...]:
    """The default fragments of `configs` (kernel-configs/), then each --config, by name or path."""
    return (*kconfig.default_fragments(configs),
            *(Path(c) if "/" in c else configs / f"{c}.config" for c in args.config))
