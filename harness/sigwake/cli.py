"""The command line: a thin layer over the library. The launcher (./sigwake)
installs what is missing and runs `test`; everything else lands here."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import binaries, results
from .matrix import RunConfig, run_matrix
from .progress import Progress

REPO = Path(__file__).resolve().parents[2]


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(os.environ.get("SIGWAKE_CACHE", Path(base) / "sigwake"))


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sigwake", description=__doc__)
    p.add_argument("--build-dir", type=Path, default=REPO / "build")
    sub = p.add_subparsers(dest="command", required=True)

    sub.add_parser("build", help="configure and build the reproducers and the guest init with Meson")

    run = sub.add_parser("run", help="test kernels and record the matrix under results/")
    run.add_argument("--kernel", action="append", dest="kernels", metavar="SPEC",
                     help="default (the Debian set), host, a path to a bzImage/vmlinuz/vmlinux, or a Debian "
                          "package name (optionally suite:name); repeatable. Default: default and host")
    run.add_argument("--accel", choices=("auto", "kvm", "tcg"), default="auto")
    run.add_argument("--results", type=Path, default=REPO / "results")
    run.add_argument("--cache", type=Path, default=default_cache())
    run.add_argument("--repro-timeout-ms", type=int, default=10_000, help="per reproducer, in the guest")
    run.add_argument("--boot-timeout", type=float, default=0.0, help="seconds per boot (default: 60 + reproducers x their timeout)")
    run.add_argument("--repeat", type=int, default=5, help="runs of each reproducer per privilege pass")
    run.add_argument("--cpus", type=int, default=1, help="guest vCPUs (more than one under TCG: see README)")
    run.add_argument("--quiet", action="store_true", help="no progress lines")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "build":
        built = binaries.build(REPO, args.build_dir, Progress())
        print("\n".join(f"{name}: {path}" for name, path in sorted(built.reproducers.items())))
        return 0

    config = RunConfig(REPO, args.build_dir, args.cache, args.results, tuple(args.kernels or ("default", "host")),
                       args.accel, args.repro_timeout_ms, args.boot_timeout, args.repeat, args.cpus)
    summary = run_matrix(config, Progress(quiet=args.quiet))
    print(results.render_matrix(summary.results))
    for result in summary.results:
        for mismatch in result.mismatches():
            print(f"differs from expectations: {mismatch}")
    print(f"recorded in {config.results_dir}/ (matrix.md and <kernel-id>.json with console logs)")
    for failure in summary.failures:
        print(f"not tested: {failure}", file=sys.stderr)
    return 1 if summary.failures else 0


if __name__ == "__main__":
    sys.exit(main())
