#!/usr/bin/python3
"""Prints the suite's kernel-mutant score: each patch in bench/mutants/ (a small,
plausible bug in the kernel's perf signal path) is applied to Debian's
linux-source-6.12, built, booted with every reproducer in every privilege pass,
and compared with the unpatched kernel. One row per mutant: the cases that
changed and how, detected or survived; then the score.

    bench/mutants.py [--mutant NAME ...] [--repeat N] [--passes P,...] [--jobs N]

With --generate, the mutants are not these patches but generated over the whole
signal path by Coccinelle (harness/sigwake/mutagen.py): at most --per-group per
function and operator, each judged once (records kept under the cache, so an
interrupted score resumes), the score written to results/mutants/ (score.json,
score.md: per function and operator, every survivor's diff); survivors explained
in bench/mutants/equivalent.tsv count as equivalent; those in blind-spots.tsv stay
survivors, with why no case sees them.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

from sigwake.programs import binaries  # noqa: E402
from sigwake.commands import kernel_bench  # noqa: E402
from sigwake.kernels import source_tree  # noqa: E402
from sigwake.kernels.build import KernelBuilder  # noqa: E402
from sigwake.commands.cli import REPO, default_cache  # noqa: E402
from sigwake.kernels.kernels import KernelCache  # noqa: E402
from sigwake.commands.mutagen import OPERATORS, PATH, MutagenError, generate  # noqa: E402
from sigwake.commands.mutant_score import choose, equivalents, judged, render, score_generated, write_score  # noqa: E402
from sigwake.commands.mutants import BaseBootError, score, table  # noqa: E402
from sigwake.commands.orchestrator import source_commit  # noqa: E402
from sigwake.core.progress import Progress  # noqa: E402

MUTANTS = Path(__file__).resolve().parent / "mutants"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mutant", action="append", default=[],
                        help="a patch name (stem); default: all (with --generate: judge only these, again if judged)")
    kernel_bench.add_options(parser)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--generate", action="store_true", help="generated mutants over the whole path")
    parser.add_argument("--per-group", type=int, default=2, help="with --generate: per function and operator")
    parser.add_argument("--sample", type=int, default=None, metavar="N",
                        help="with --generate: N mutants drawn at random, stratified by function, instead of "
                             "--per-group (N at least the population: every mutant); the figure gets a 95%% interval")
    parser.add_argument("--seed", type=int, default=1, help="with --sample: the random draw's seed (default 1)")
    parser.add_argument("--deepen", type=int, default=6,
                        help="with --generate: at most this many more mutants for each function whose sample gave "
                             "no verdict (all equivalent, or failed to build or boot), one at a time")
    parser.add_argument("--shard", default="1/1", help="with --generate: K/N judges every N-th mutant from the "
                        "K-th, in its own tree (run N at once; a last run without --shard writes the whole score)")
    parser.add_argument("--limit", type=int, default=None, metavar="N",
                        help="with --generate: judge at most N mutants this run, then write the score of every "
                             "record (0: judge none; a sample not yet whole says how many of its mutants have one)")
    parser.add_argument("--rejudge", action="append", default=[], metavar="VERDICT",
                        help="with --generate: judge again only the mutants recorded with this verdict (e.g. survived)")
    parser.add_argument("--tree-copy", type=int, default=None,
                        help="which kept tree to build in (default: the shard's); a kernel config of its own keeps "
                             "its own objects")
    parser.add_argument("--records", type=Path, default=None,
                        help="with --generate: the folder of judged mutants' records (default: under the cache); "
                             "a folder in a checkout keeps a score that takes several sessions beyond one machine")
    parser.add_argument("--results", type=Path, default=REPO / "results")
    args = parser.parse_args()
    progress = Progress()
    if args.limit is not None and args.sample is None:
        parser.error("--limit is for a --sample: a per-group score deepens, which a limit would cut")
    patches = sorted(p for p in MUTANTS.glob("*.patch") if not args.mutant or p.stem in args.mutant)
    cache = default_cache()
    built = binaries.build(REPO, REPO / "build", progress)
    k, n = (int(x) for x in args.shard.split("/"))
    if not 1 <= k <= n:
        parser.error(f"--shard {args.shard}: K/N with 1 <= K <= N")
    tree = source_tree.kept_tree(KernelCache(cache), "6.12", progress,
                                 copy=k - 1 if args.tree_copy is None else args.tree_copy)
    builder = KernelBuilder(cache, **({"jobs": args.jobs} if args.jobs else {}))
    config = kernel_bench.run_options(args)
    start = time.monotonic()
    fragments = kernel_bench.fragments(args, REPO / "kernel-configs")
    try:
        if args.generate:
            folder = cache / "generated-mutants"
            explained = equivalents(MUTANTS / "equivalent.tsv")
            records = score_generated(builder, tree, fragments, built, config,
                                      folder / f"shard-{k}-of-{n}" if n > 1 else folder, progress, args.per_group,
                                      records=args.records or folder / "records", shard=(k - 1, n),
                                      rejudge=tuple(args.rejudge), only=tuple(args.mutant), explained=explained,
                                      deepen=args.deepen, sample_size=args.sample, seed=args.seed,
                                      judged_at=source_commit(REPO), limit=args.limit)
            records = judged(records, explained, equivalents(MUTANTS / "blind-spots.tsv"))
            _, population = choose(generate(tree, folder / "patches", PATH, OPERATORS), args.per_group, args.sample,
                                   args.seed)
            for path in write_score(args.results, records, time.monotonic() - start, population):
                print(path)
            print(render(records, time.monotonic() - start, population).split("\n\n")[1])
            return 0
        results = score(builder, tree, fragments, patches, built, config, cache / "mutants", progress)
    except (BaseBootError, MutagenError) as e:
        print(f"bench/mutants.py: {e}", file=sys.stderr)
        return 3
    print(table(results))
    print(f"{len(patches)} mutants in {time.monotonic() - start:.0f} s (repeat {args.repeat}, passes {args.passes})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
