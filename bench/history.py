#!/usr/bin/python3
"""Prints the kernel-history score: the upstream fixes to the signal path that
Debian's changelogs of linux 6.1, 6.12 and 7.2 name, as bench/history/fixes.tsv
classifies them; each kept fix's bug, re-created as a patch in bench/history/, is
applied to Debian's linux-source-6.12, built, booted with every reproducer and
judged against the unpatched kernel as a mutant is (commands/mutants.py). Each
judged fix is kept under the cache as soon as it is judged (a stopped score
resumes); the score goes to results/history/ (score.json, score.md).

    bench/history.py [--list | --judged-only] [--fix PATCH ...] [--repeat N] [--passes P,...] [--config FRAGMENT ...]

--list prints every path subject the changelogs name with its decision, and
exits 1 when one has no row in fixes.tsv (nothing is built).
"""

from __future__ import annotations

import argparse
import gzip
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))

from sigwake.programs import binaries  # noqa: E402
from sigwake.commands import kernel_bench  # noqa: E402
from sigwake.kernels import source_tree  # noqa: E402
from sigwake.kernels.build import KernelBuilder  # noqa: E402
from sigwake.commands.cli import REPO, default_cache  # noqa: E402
from sigwake.commands.orchestrator import source_commit  # noqa: E402
from sigwake.kernels.kernels import KernelCache  # noqa: E402
from sigwake.commands.history_score import (Fix, HistoryRecord, judged_once, named_fixes, read_fixes,  # noqa: E402
                                            record_of, render, unclassified, write_score)
from sigwake.commands.mutant_score import ScoreStore  # noqa: E402
from sigwake.commands.mutants import BaseBootError, score  # noqa: E402
from sigwake.core.progress import Progress  # noqa: E402

HISTORY = Path(__file__).resolve().parent / "history"
SERIES = ("6.1", "6.12", "7.2")  # the linux-source packages whose changelogs are read


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="list and classify only; exit 1 on an unclassified fix")
    parser.add_argument("--fix", action="append", default=[], metavar="PATCH",
                        help="a re-created fix's patch (file name or stem), judged again; default: every kept fix "
                             "not judged yet")
    parser.add_argument("--judged-only", action="store_true",
                        help="judge nothing: write the score from the fixes judged so far (the rest not-judged)")
    kernel_bench.add_options(parser)
    parser.add_argument("--results", type=Path, default=REPO / "results")
    args = parser.parse_args()
    progress = Progress()
    cache = default_cache()
    kernels = KernelCache(cache)
    named: dict[str, list[str]] = {}
    sources = []
    for series in SERIES:
        changelog = kernels.source_changelog(series, progress)
        sources.append(changelog.parent.name.replace("_", " "))
        for subject, versions in named_fixes(gzip.decompress(changelog.read_bytes()).decode()).items():
            named.setdefault(subject, []).extend(v for v in versions if v not in named.get(subject, []))
    fixes = read_fixes(HISTORY / "fixes.tsv")
    missing = unclassified(named, fixes)
    for subject in missing:
        print(f"unclassified: {subject} (named by {', '.join(named[subject])}): add a row to bench/history/fixes.tsv")
    if args.list:
        for fix in fixes:
            print(f"{fix.decision}\t{fix.subject}\t{', '.join(named.get(fix.subject, [])) or 'in no changelog'}")
        print(f"{len(named)} subjects named, {len(fixes)} classified, {len(missing)} unclassified")
        return 1 if missing else 0
    def debian(fix: Fix) -> list[str]:
        """The Debian versions naming the fix, under any of its subjects."""
        return sorted({v for s in fix.subjects for v in named.get(s, [])})

    wanted = {Path(f).stem for f in args.fix}
    kept = judged_once(fixes)
    store = ScoreStore(cache / "history" / "records", HistoryRecord)
    todo = [f for f in kept if f.patch and not args.judged_only
            and (Path(f.patch).stem in wanted if wanted else store.get(Path(f.patch).stem) is None)]
    start = time.monotonic()
    if todo:
        built = binaries.build(REPO, REPO / "build", progress)
        tree = source_tree.kept_tree(kernels, "6.12", progress)
        builder = KernelBuilder(cache)
        config = kernel_bench.run_options(args)
        fragments = kernel_bench.fragments(args, REPO / "kernel-configs")
        programs = source_commit(REPO)  # each record names the reproducers that judged it
        by_patch = {f.patch: f for f in todo}
        try:
            score(builder, tree, fragments, [HISTORY / f.patch for f in todo], built, config, cache / "history",
                  progress, after_each=lambda result: store.put(
                      record_of(by_patch[result.patch.name], result, debian(by_patch[result.patch.name]),
                                " + ".join(f.stem for f in fragments), programs)))
        except BaseBootError as e:
            print(f"bench/history.py: {e}", file=sys.stderr)
            return 3
    records = [store.get(Path(f.patch).stem) if f.patch else None for f in kept]
    records = [r if r is not None else record_of(f, None, debian(f)) for f, r in zip(kept, records)]
    seconds = time.monotonic() - start if todo else None  # --judged-only judged nothing: no time to tell
    markdown = render(records, fixes, named, sources, seconds)
    for path in write_score(args.results, records, markdown, seconds):
        print(path)
    print(markdown.split("\n\n")[1])
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
