"""The generated mutants' score, kept like results: one record per mutant (its
function, operator, verdict, what killed it, its diff), saved as soon as it is
judged so that a long score resumes where it stopped, then rendered per function
and operator with every survivor's diff. A survivor explained in
bench/mutants/equivalent.tsv (name, then why no program can tell) counts as
equivalent, not as survived; one in bench/mutants/blind-spots.tsv (a program
could tell, but no case here does) stays a survivor, with why beside it."""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from ..core.atomic import atomic_write
from ..programs.binaries import Binaries
from ..kernels.build import KernelBuilder
from ..targets.options import RunOptions
from .mutagen import OPERATORS, PATH, Mutant, further, generate, sample, stratified
from .mutants import Boot, MutantResult, score
from ..core.progress import Progress
from ..core.schema import CURRENT
from ..store.store import write_checked
from ..core.typed_json import from_data, to_data

class Named(Protocol):
    @property
    def name(self) -> str: ...


R = TypeVar("R", bound=Named)

# Why a mutant whose kernel is the unpatched one's, in code, is equivalent.
SAME_CODE = "its kernel's code (vmlinux .text, .rodata, .data) is the unpatched kernel's, byte for byte"

VERDICTS = ("killed", "survived", "equivalent", "build-failed", "boot-failed")


@dataclass(frozen=True)
class MutantRecord:
    name: str
    path: str
    function: str
    operator: str
    verdict: str  # one of VERDICTS
    killed_by: list[str] = field(default_factory=list)  # the changes that killed it, as validate-patch says them
    why: str = ""  # the build or boot error, or why it is equivalent
    diff: str = ""
    config: str = ""  # the kernel-configs fragments of the kernels it was judged on
    further: bool = False  # chosen beyond the sample, because its function's sample gave no verdict
    judged_at: str = ""  # the sigwake commit whose cases judged it (orchestrator.source_commit)


def record_of(mutant: Mutant, result: MutantResult, config: str, judged_at: str = "") -> MutantRecord:
    verdict = {"detected": "killed", "survived": "survived", "build failed": "build-failed",
               "boot failed": "boot-failed", "equivalent": "equivalent"}[result.verdict]
    why = SAME_CODE if result.same_code else result.build_error or result.boot_error or result.died
    return MutantRecord(mutant.name, mutant.path, mutant.function, mutant.operator, verdict,
                        [str(c) for c in result.detected_by], why, mutant.diff, config, judged_at=judged_at)


class ScoreStore(Generic[R]):
    """One JSON file per judged record in a folder (a mutant's, a re-created fix's, named by `name`): what a
    resumed score skips."""

    def __init__(self, folder: Path, kind: type[R]) -> None:
        self.folder = folder
        self.kind = kind
        folder.mkdir(parents=True, exist_ok=True)

    def get(self, name: str) -> R | None:
        try:
            return from_data(self.kind, json.loads((self.folder / f"{name}.json").read_text()))
        except (OSError, ValueError, TypeError):
            return None

    def put(self, record: R) -> None:
        atomic_write(self.folder / f"{record.name}.json", json.dumps(to_data(record), indent=2) + "\n")


def equivalents(explained: Path) -> dict[str, str]:
    """name -> why no program can tell it from the kernel, from a tab-separated file ('#' lines are notes)."""
    if not explained.exists():
        return {}
    found = {}
    for line in explained.read_text().splitlines():
        if line.strip() and not line.startswith("#") and "\t" in line:
            name, why = line.split("\t", 1)
            found[name.strip()] = why.strip()
    return found


def judged(records: list[MutantRecord], explained: dict[str, str],
           blind_spots: dict[str, str] | None = None) -> list[MutantRecord]:
    """Survivors that are explained become equivalent, with the explanation; those in `blind_spots` (a program
    could tell, none here does) stay survivors, with why none sees them."""
    blind = blind_spots or {}
    return [replace(r, verdict="equivalent", why=explained[r.name]) if r.verdict == "survived" and r.name in explained
            else replace(r, why=blind[r.name]) if r.verdict == "survived" and r.name in blind else r
            for r in records]


@dataclass(frozen=True)
class Population:
    """What the judged mutants were drawn from, and how they were chosen."""

    generated: dict[str, int]  # file -> the mutants the path generates there
    chosen: int
    how: str  # in words: every mutant, a stratified random sample (size, seed), or N per function and operator
    seed: int | None = None  # a random sample's seed: its figures carry a 95% interval


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of k successes in n (95% at z 1.96)."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def share(killed: int, judgeable: int, sampled: bool) -> str:
    """"91.3%", with a sample's 95% interval; one decimal: 89.7% is no 90%."""
    if not judgeable:
        return "n/a"
    text = f"{100 * killed / judgeable:.1f}%"
    if sampled:
        low, high = wilson(killed, judgeable)
        text += f"; 95% interval {100 * low:.1f}-{100 * high:.1f}%"
    return text


def render(records: list[MutantRecord], seconds: float | None = None, population: Population | None = None) -> str:
    """Markdown: the figure and its population, per file, a table per function and operator, then every survivor
    with its diff."""
    counts = Counter(r.verdict for r in records)
    judgeable = counts["killed"] + counts["survived"]
    whole = population is None or len(records) >= population.chosen
    # A sample's interval stands for the population only once every chosen mutant has its record.
    sampled = population is not None and population.seed is not None and whole
    lines = ["# Generated kernel mutants", "",
             f"**{counts['killed']} of {judgeable} non-equivalent mutants killed "
             f"({share(counts['killed'], judgeable, sampled)})**; "
             + ", ".join(f"{counts[v]} {v}" for v in VERDICTS if counts[v])
             + (f"; this run {seconds:.0f} s" if seconds is not None else "")
             + ("" if whole or population is None else f"; not yet whole: {len(records)} of the "
                f"{population.chosen} chosen mutants have a record, so no interval"), ""]
    if population is not None:
        lines += [f"Population: the {sum(population.generated.values())} mutants the path generates ("
                  + ", ".join(f"{f} {n}" for f, n in population.generated.items()) + f"); judged: {population.how}, "
                  f"{population.chosen} chosen, {len(records)} with a record. Equivalent only with proof: the kernel's "
                  "code identical to the unpatched kernel's, or a reason in bench/mutants/equivalent.tsv that holds "
                  "on every config.", ""]
    files: dict[str, Counter[str]] = {}
    for r in records:
        files.setdefault(r.path, Counter())[r.verdict] += 1
    lines += ["| file | killed of non-equivalent | " + " | ".join(VERDICTS) + " |", "|---|---|" + "---|" * len(VERDICTS)]
    for path, c in sorted(files.items()):
        judged_here = c["killed"] + c["survived"]
        lines.append(f"| {path} | {c['killed']} of {judged_here} ({share(c['killed'], judged_here, sampled)}) | "
                     + " | ".join(str(c[v]) for v in VERDICTS) + " |")
    lines += ["", "| function | operator | " + " | ".join(VERDICTS) + " |", "|---|---|" + "---|" * len(VERDICTS)]
    groups: dict[tuple[str, str], Counter[str]] = {}
    for r in records:
        groups.setdefault((r.function, r.operator), Counter())[r.verdict] += 1
    for (function, operator), c in sorted(groups.items()):
        lines.append(f"| {function} | {operator} | " + " | ".join(str(c[v]) for v in VERDICTS) + " |")
    deeper = Counter(r.function for r in records if r.further)
    if deeper:
        lines += ["", "Sampled further, one mutant at a time until one was killed or survived (their functions' "
                  "first sample was all equivalent or failed to build or boot): "
                  + ", ".join(f"{f} +{n}" for f, n in sorted(deeper.items()))]
    configs = Counter(r.config or "(not recorded)" for r in records)
    lines += ["", "Kernels judged on: " + "; ".join(f"{c} ({n} mutants)" for c, n in configs.most_common())]
    commits = Counter(r.judged_at or "(not recorded)" for r in records)
    lines += ["", "Judged by sigwake at: " + "; ".join(f"{c} ({n} mutants)" for c, n in commits.most_common())]
    unkilled = [f for f in sorted({r.function for r in records})
                if not any(r.function == f and r.verdict == "killed" for r in records)]
    if unkilled:
        lines += ["", "Functions without a kill: " + ", ".join(unkilled)]
    for r in (r for r in records if r.verdict in ("survived", "equivalent")):
        lines += ["", f"## {r.verdict}: {r.name}", ""] + ([r.why, ""] if r.why else []) + (
            [f"Judged on {r.config}.", ""] if r.config else []) + ["```diff", r.diff.rstrip(), "```"]
    return "\n".join(lines) + "\n"


def write_score(results_dir: Path, records: list[MutantRecord], seconds: float | None = None,
                population: Population | None = None) -> list[Path]:
    """results/mutants/score.json (every record, and the population) and results/mutants/score.md (not beside
    the kernel results, which are every *.json of results/)."""
    folder = results_dir / "mutants"
    data = {"schema": CURRENT["mutant-score"], "seconds": seconds, "mutants": to_data(records),
            "population": to_data(population) if population else None}
    return [write_checked(folder / "score.json", "mutant-score", data),
            atomic_write(folder / "score.md", render(records, seconds, population))]


def choose(generated: list[tuple[Mutant, Path]], per_group: int, sample_size: int | None,
           seed: int) -> tuple[list[tuple[Mutant, Path]], Population]:
    """The mutants to judge and their population: `sample_size` of them drawn at random, stratified by function
    (mutagen.stratified), or `per_group` per function and operator (mutagen.sample)."""
    files = Counter(m.path for m, _ in generated)
    if sample_size is not None:
        chosen = stratified(generated, sample_size, seed)
        whole = len(chosen) == len(generated)
        how = ("every mutant" if whole else
               f"a random sample of {len(chosen)}, stratified by function with proportional allocation, seed {seed}")
        return chosen, Population(dict(files), len(chosen), how, None if whole else seed)
    chosen = sample(generated, per_group)
    return chosen, Population(dict(files), len(chosen), f"at most {per_group} per function and operator, spread "
                                                        "over the function (first, last, between), not at random")


def score_generated(builder: KernelBuilder, tree: Path, fragments: tuple[Path, ...], binaries: Binaries,
                    config: RunOptions, work: Path, progress: Progress, per_group: int = 2,
                    path: dict[str, tuple[str, ...]] | None = None, operators: tuple[str, ...] = OPERATORS,
                    records: Path | None = None, shard: tuple[int, int] = (0, 1), boot: Boot | None = None,
                    rejudge: tuple[str, ...] = (), only: tuple[str, ...] = (), explained: dict[str, str] | None = None,
                    deepen: int = 0, sample_size: int | None = None, seed: int = 0,
                    judged_at: str = "", limit: int | None = None) -> list[MutantRecord]:
    """Generates the path's mutants in `tree`, keeps `per_group` per function and operator, and scores those not
    judged before (`records`, default work/records, holds one record per judged mutant: an interrupted score
    resumes). Shard (k, n) judges only every n-th chosen mutant from the k-th: n processes, each with its own
    tree and work folder and the records shared, judge the sample between them. Records whose verdict is in
    `rejudge`, and those named in `only`, are judged (again) on these fragments, and then only they. A whole
    (unsharded, not re-judging) score then deepens: up to `deepen` times, each function none of whose chosen mutants was killed or
    survived (after `explained`) gets its next mutant (mutagen.further), judged if it was not: a function is not
    left without a verdict because its first picks were equivalent or crashed, and the pick never looks at what
    a mutant will do. With `sample_size`, the chosen are a stratified random sample (choose()), never deepened:
    its figure stands for the population with an interval; it is judged in an order drawn with the same seed, so
    that the part an interrupted score has judged is a random part of the sample, not its first files. Each
    record names `judged_at`, the sigwake commit that judged it. `limit` (a sample's only): judge at most this
    many this run, the next in the sample's order (0: none, the score from the records alone); a record it leaves
    to be judged again (another config's, or a verdict in `rejudge`) is not returned. Returns every chosen
    mutant's record that exists."""
    if limit is not None and sample_size is None:
        raise ValueError("a limit is for a random sample: a per-group score deepens, which a limit would cut")
    generated = generate(tree, work / "patches", path or PATH, operators)
    mutants, _ = choose(generated, per_group, sample_size, seed)
    if sample_size is not None:
        deepen = 0
    store = ScoreStore(records or work / "records", MutantRecord)
    # A record judged again is replaced only once its new one exists: an interrupted run loses none.
    again = {m.name for m, _ in mutants if (kept := store.get(m.name)) is not None and kept.verdict in rejudge}
    kernel_config = " + ".join(f.stem for f in fragments)
    k, n = shard
    # A record judged on another kernel config says nothing of this one (what one config hides, another shows).
    again |= {m.name for m, _ in mutants if (kept := store.get(m.name)) is not None and kept.config
              and kept.config != kernel_config and not (rejudge or only)}
    todo = [(m, p) for i, (m, p) in enumerate(mutants) if i % n == k and (
        m.name in again or m.name in only or (store.get(m.name) is None and not (rejudge or only)))]
    if sample_size is not None:  # one order for the whole sample, drawn with its seed: each run takes the next
        order = [m.name for m, _ in mutants]
        random.Random(seed).shuffle(order)
        rank = {name: i for i, name in enumerate(order)}
        todo.sort(key=lambda item: rank[item[0].name])
    waiting: set[str] = set()  # records to be judged again that this run leaves: they count as none yet
    if limit is not None:
        waiting = {m.name for m, _ in todo[limit:] if m.name in again}
        todo = todo[:limit]
    progress.step(f"{len(mutants)} generated mutants chosen, {sum(store.get(m.name) is not None for m, _ in mutants)}"
                  f" judged before, {len(todo)} to judge" + (f" ({len(again)} again)" if again else "")
                  + (f" (shard {k + 1} of {n})" if n > 1 else ""))

    def judge(items: list[tuple[Mutant, Path]]) -> None:
        by_patch = {p: m for m, p in items}
        if items:
            score(builder, tree, fragments, [p for _, p in items], binaries, config, work, progress, boot,
                  after_each=lambda result: store.put(record_of(by_patch[result.patch], result, kernel_config,
                                                                judged_at)))
    judge(todo)
    extra: list[tuple[Mutant, Path]] = []
    for _ in range(deepen if n == 1 else 0):
        so_far = judged([r for m, _ in mutants + extra if (r := store.get(m.name)) is not None], explained or {})
        decided = {r.function for r in so_far if r.verdict in ("killed", "survived")}
        undecided = sorted({m.function for m, _ in mutants} - decided)
        picks = [p for f in undecided if (p := further(generated, mutants + extra, f)) is not None]
        new = [item for item in picks if store.get(item[0].name) is None or item[0].name in only]
        if not picks or any((rejudge or only) and item[0].name not in only for item in new):
            break  # a re-judging or named run judges nothing it was not asked to
        extra += picks
        judge(new)
    return ([r for m, _ in mutants if m.name not in waiting and (r := store.get(m.name)) is not None]
            + [replace(r, further=True) for m, _ in extra if (r := store.get(m.name)) is not None])
