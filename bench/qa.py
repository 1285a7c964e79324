#!/usr/bin/python3
"""Prints the wall time of a whole `sigwake qa` (default: both architectures, every
flavour, every suite, --jobs the cores), how many kernels it ran and how many packages
its bisections judged, and its lines. The results land where --results says (the run's
own results/ when you want them kept).

    bench/qa.py [--arch amd64,arm64] [--flavour all] [--jobs N] [--results DIR] [--repeat N] [--cpus N]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

from sigwake.commands.cli import main as sigwake  # noqa: E402
from sigwake.core.exit_codes import FINDING, NO_FINDING  # noqa: E402
from sigwake.store.store import load_qa, load_results  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", default="amd64,arm64")
    parser.add_argument("--flavour", default="all")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cpus", type=int, default=1)
    parser.add_argument("--results", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sigwake-bench-qa-") as tmp:
        results = args.results or Path(tmp)
        start = time.monotonic()
        status = sigwake(["qa", "--arch", args.arch, "--flavour", args.flavour, "--jobs", str(args.jobs),
                          "--repeat", str(args.repeat), "--cpus", str(args.cpus), "--results", str(results), "--quiet"])
        seconds = time.monotonic() - start
        lines = load_qa(results)
        kernels = load_results(results).results
    judged = sum(int(m) for line in lines for b in line.boundaries for m in re.findall(r"judged (\d+)", b.how))
    print(f"sigwake qa --arch {args.arch} --flavour {args.flavour} --jobs {args.jobs} --repeat {args.repeat} "
          f"--cpus {args.cpus} "
          f"on {os.cpu_count()} cores: {seconds:.0f} s wall ({seconds / 60:.1f} min), exit {status}")
    boots = sum(k.boot.seconds or 0.0 for k in kernels if k.runner.mode == "qemu")
    print(f"  {len(kernels)} kernels run in full; their boots alone sum to {boots:.0f} s (what one at a time would "
          f"at least take); {judged} packages judged by {sum(len(l.boundaries) for l in lines)} bisections")
    for line in lines:
        print(f"  {line.sentence()}")
    return 0 if status in (NO_FINDING, FINDING) else status  # it measured; findings are in its summary


if __name__ == "__main__":
    sys.exit(main())
