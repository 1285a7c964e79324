#!/usr/bin/python3
"""Prints the wall time of `run` over the default Debian set, serially and with
--jobs N (default: the cores), and the speed-up; and whether the two runs reached
the same verdicts, case by case.

    bench/parallel_boots.py [--jobs N] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

from sigwake.commands.cli import REPO, default_cache  # noqa: E402
from sigwake.commands.orchestrator import RunConfig, run_kernels  # noqa: E402
from sigwake.core.progress import Progress  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    seconds, verdicts = {}, {}
    with tempfile.TemporaryDirectory(prefix="sigwake-parallel-") as tmp:
        for jobs in (1, args.jobs):
            config = RunConfig(REPO, REPO / "build", default_cache(), Path(tmp) / f"jobs{jobs}", ("default",),
                               repeat=args.repeat, jobs=jobs)
            start = time.monotonic()
            summary = run_kernels(config, Progress(quiet=True))
            seconds[jobs] = time.monotonic() - start
            verdicts[jobs] = {(r.kernel_id, c.privilege, c.name): c.verdict for r in summary.results
                              for c in r.reproducers}
    differing = sorted(k for k in verdicts[1] if verdicts[1][k] != verdicts[args.jobs].get(k))
    print(f"default set, repeat {args.repeat}: serial {seconds[1]:.1f} s, --jobs {args.jobs} "
          f"{seconds[args.jobs]:.1f} s, speed-up {seconds[1] / seconds[args.jobs]:.2f}x")
    print(f"verdicts that differ between the two runs: {len(differing)} {differing[:5]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
