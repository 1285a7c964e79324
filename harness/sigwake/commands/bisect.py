"""Bisection the way syzkaller's pkg/bisect does it: a tester judges one candidate
(a commit, a Debian package) and a search proposes the next from what was marked
old, new or skip; one driver runs them in-process. Both endpoints are judged
first. A candidate whose repeated runs split is marked by the split rule (SPLIT:
by default, one that shows the old behaviour in any run still has it), said in
its note. A candidate that cannot be judged (a build or boot failure, a third
verdict) is skipped, with a note. Each candidate's boot is judged by the rules
of a run (judgement.py): a crash, a hang, a split, a kernel report or the
reproducer's error is the step's problem, a finding beside whatever it was
marked (gate.of_steps)."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cmp_to_key
from pathlib import Path
from typing import Protocol

import apt_pkg

from ..programs.binaries import Binaries
from ..kernels.build import BuildError, BuildRequest, KernelBuilder, git
from ..core import debian_names
from ..core.exit_codes import COULD_NOT_TEST, FINDING, USAGE
from ..kernels.debian import SUITE_SOURCES, DebianError, Package, compare_versions
from ..targets.options import RunOptions
from ..kernels.kernels import Kernel, KernelCache, file_kernel
from ..core.progress import Progress
from ..targets.registry import target_for
from ..core.model import KernelResult, Origin, Runner
from ..core.outcomes import BisectionRecord, Mark, Step, now
from ..core.verdicts import Verdict
from ..judge.gate import OTHER_VERDICT, STEP_PROBLEM_OF
from ..judge.judgement import findings
from ..programs.catalogue import Catalogue
from ..targets.interpret import KernelOutcome


class BisectError(RuntimeError):
    """A bisection that cannot start or finish; the message says why, the exit code what kind it is: an
    endpoint that cannot be judged, or git that does not record a mark, could not be tested (3); a tree with
    uncommitted changes, or a flavour or range with fewer than two packages, is the command line's (2);
    endpoints that agree, or a change that is no single step, are findings about the range (1)."""

    def __init__(self, message: str, exit_code: int = FINDING) -> None:
        super().__init__(message)
        self.exit_code = exit_code


# How a candidate whose runs split is marked: "old" when the old verdict shows in any run (it still
# reproduces the old behaviour), "new" when the new one does, or "skip" (never judged).
SPLIT = ("old", "new", "skip")


@dataclass(frozen=True)
class Probed:
    """What a tester found of one candidate."""

    verdict: Verdict | None  # None: not judged (the note says why); FLAKY: its runs split
    note: str
    runs: dict[str, int] = field(default_factory=dict)  # verdict -> runs
    problem: str = ""  # a finding of the step (gate.STEP_PROBLEMS): crash, hang, split, splat, refusal, error
    booted: Booted | None = field(default=None, compare=False)  # its kernel's boot, when one ran


@dataclass(frozen=True)
class Booted:
    """A kernel a bisection booted, kept as a run's results are (store.write_bisection)."""

    result: KernelResult
    console: Path  # its console log


class Tester(Protocol):
    def judge(self, candidate: str) -> Probed:
        """The candidate's kernel verdict (FLAKY with its runs when they split), or None and why not."""


class Search(Protocol):
    def start(self, old: str, new: str) -> None: ...

    def next(self) -> str | None:
        """The next candidate to judge; None once the answer is known."""

    def mark(self, candidate: str, mark: Mark) -> None: ...

    def first_new(self) -> list[str]:
        """The first candidate with the new behaviour; several when skips left a range."""

    def close(self) -> None: ...


@dataclass
class BisectReport:
    first_changed: list[str]
    last_old: str
    old: Verdict
    new: Verdict
    steps: list[Step] = field(default_factory=list)  # both endpoints first
    confidence: float = 0.0
    booted: list[Booted] = field(default_factory=list, compare=False)  # the kernels its steps booted, in order

    def kept(self) -> list[tuple[KernelResult, Path]]:
        """What store.write_bisection keeps beside the record: each booted kernel's result and console log."""
        return [(b.result, b.console) for b in self.booted]

    def summary(self, subject: str) -> str:
        skipped = [s.candidate for s in self.steps if s.mark is Mark.SKIP]
        what = self.first_changed[0] if len(self.first_changed) == 1 else f"one of {', '.join(self.first_changed)}"
        return (f"first where {subject} went from {self.old} to {self.new}: {what} (last {self.old}: {self.last_old})\n"
                f"judged {len(self.steps)} ({len(self.steps) - len(skipped)} judged, {len(skipped)} skipped"
                + (f": {', '.join(skipped)}" if skipped else "") + f"); confidence {self.confidence:.2f}")


def mark_of(probed: Probed, old: Verdict, new: Verdict, split: str) -> tuple[Mark, str]:
    """The mark of a judged candidate, and its note (a split says how it was marked)."""
    if probed.verdict is old or probed.verdict is new:
        return (Mark.OLD if probed.verdict is old else Mark.NEW), probed.note
    if probed.verdict is Verdict.FLAKY and split != "skip":
        side = old if split == "old" else new
        shown = probed.runs.get(str(side), 0)
        if shown:
            total = sum(probed.runs.values())
            return Mark(split), f"{probed.note}; {side} in {shown} of {total} runs: marked {split} (split rule {split})"
    # Anything else (a third verdict, a split without the rule's side, none) says nothing about the change.
    return Mark.SKIP, probed.note


def bisect(search: Search, tester: Tester, old_end: str, new_end: str,
           progress: Progress | None = None, jobs: int = 1, split: str = "old") -> BisectReport:
    """`old_end` shows the old behaviour, `new_end` the new one, each in every run; finds where it
    changed. A candidate whose runs split is marked by `split` (SPLIT). With `jobs` > 1 and a search
    that can propose several candidates (ListSearch), each round judges that many at once."""
    if split not in SPLIT:
        raise ValueError(f"split rule {split!r}: one of {', '.join(SPLIT)}")
    steps: list[Step] = []
    booted: list[Booted] = []

    def record(candidate: str, probed: Probed, note: str, mark: Mark, problem: str) -> None:
        steps.append(Step(candidate, probed.verdict, note, mark, problem))
        booted.extend([probed.booted] if probed.booted is not None else [])
        if progress is not None:
            progress.step(f"{candidate}: {note} -> {mark.value}" + (f" ({problem})" if problem else ""))

    pool = ThreadPoolExecutor(max_workers=max(jobs, 1), thread_name_prefix="judge")
    ends = dict(zip((old_end, new_end), pool.map(tester.judge, (old_end, new_end))))
    for end, probed in ends.items():
        if probed.verdict is None or probed.verdict is Verdict.FLAKY:
            # An endpoint whose kernel crashed, hung, split or splatted is that finding; one the target could
            # not run is untested.
            problem = f" ({probed.problem}: a finding)" if probed.problem else ""
            raise BisectError(f"endpoint {end} cannot be judged: {probed.note}{problem}",
                              FINDING if probed.problem else COULD_NOT_TEST)
    old, new = ends[old_end].verdict, ends[new_end].verdict
    assert old is not None and new is not None
    if old is new:
        raise BisectError(f"both endpoints are {old}: nothing to bisect")
    record(old_end, ends[old_end], ends[old_end].note, Mark.OLD, ends[old_end].problem)
    record(new_end, ends[new_end], ends[new_end].note, Mark.NEW, ends[new_end].problem)
    search.start(old_end, new_end)
    batches = isinstance(search, ListSearch) and jobs > 1
    try:
        while candidates := (search.next_batch(jobs) if batches else [c for c in [search.next()] if c is not None]):
            for candidate, probed in zip(candidates, pool.map(tester.judge, candidates)):
                mark, note = mark_of(probed, old, new, split)
                # A kernel verdict neither old nor new: the behaviour did not change in one step.
                other = OTHER_VERDICT if mark is Mark.SKIP and probed.verdict is not None and \
                    probed.verdict.is_kernel_verdict else ""
                record(candidate, probed, note, mark, probed.problem or other)
                search.mark(candidate, mark)
        first = search.first_new()
    finally:
        search.close()
        pool.shutdown()
    last_old = next(s.candidate for s in reversed(steps) if s.mark is Mark.OLD)
    return BisectReport(first, last_old, old, new, steps, 1.0 / len(first), booted)


class ListSearch:
    """Binary search over candidates in order (the first old, the last new); a skipped candidate is
    stepped past, nearest the middle first."""

    def __init__(self, candidates: list[str]) -> None:
        self.candidates = candidates
        self.lo, self.hi = 0, len(candidates) - 1
        self.skipped: set[int] = set()

    def start(self, old: str, new: str) -> None:
        self.lo, self.hi = self.candidates.index(old), self.candidates.index(new)

    def next(self) -> str | None:
        batch = self.next_batch(1)
        return batch[0] if batch else None

    def next_batch(self, n: int) -> list[str]:
        """Up to `n` candidates that split what is left into n + 1 even parts (skips stepped past)."""
        open_ = [i for i in range(self.lo + 1, self.hi) if i not in self.skipped]
        chosen: list[int] = []
        for k in range(1, n + 1):
            target = self.lo + (self.hi - self.lo) * k / (n + 1)
            left = [i for i in open_ if i not in chosen]
            if left:
                chosen.append(min(left, key=lambda i: (abs(i - target), i)))
        return [self.candidates[i] for i in sorted(chosen)]

    def mark(self, candidate: str, mark: Mark) -> None:
        index = self.candidates.index(candidate)
        if mark is Mark.OLD:
            self.lo = max(self.lo, index)
        elif mark is Mark.NEW:
            self.hi = min(self.hi, index)
        else:
            self.skipped.add(index)
        if self.lo >= self.hi:
            raise BisectError(f"{self.candidates[self.lo]} has the old behaviour after {self.candidates[self.hi]} "
                              "had the new one: the change is not a single step")

    def first_new(self) -> list[str]:
        return self.candidates[self.lo + 1:self.hi + 1]

    def close(self) -> None:
        pass


class GitSearch:
    """git bisect's own bookkeeping, in-process: marks with `git bisect old|new|skip`, reads the
    state back from its refs (never from what it prints), and leaves the tree where it was."""

    def __init__(self, tree: Path) -> None:
        self.tree = tree
        branch = subprocess.run(["git", "-C", str(tree), "symbolic-ref", "-q", "--short", "HEAD"],
                                capture_output=True, text=True, timeout=60)
        self.original = branch.stdout.strip() if branch.returncode == 0 else git(tree, "rev-parse", "HEAD").strip()

    def start(self, old: str, new: str) -> None:
        git(self.tree, "bisect", "start")
        git(self.tree, "bisect", "new", new)
        git(self.tree, "bisect", "old", old)

    def _refs(self, prefix: str) -> set[str]:
        return set(git(self.tree, "for-each-ref", "--format=%(objectname)", f"refs/bisect/{prefix}").split())

    def _remaining(self) -> list[str]:
        """Commits that may still be the first new one, oldest first."""
        new = git(self.tree, "rev-parse", "refs/bisect/new").strip()
        return git(self.tree, "rev-list", "--reverse", new, "--not", *self._refs("old-*")).split()

    def next(self) -> str | None:
        new, skipped = git(self.tree, "rev-parse", "refs/bisect/new").strip(), self._refs("skip-*")
        untested = [c for c in self._remaining() if c != new and c not in skipped]
        if not untested:
            return None
        head = git(self.tree, "rev-parse", "HEAD").strip()  # git bisect checked out its choice
        return head if head in untested else untested[len(untested) // 2]

    def mark(self, candidate: str, mark: Mark) -> None:
        # Its exit status says nothing we need (it fails once only skipped commits are left); the refs
        # it writes are what counts, and they are checked.
        subprocess.run(["git", "-C", str(self.tree), "bisect", mark.value, candidate], capture_output=True,
                       text=True, timeout=600)
        recorded = {Mark.OLD: self._refs("old-*"), Mark.SKIP: self._refs("skip-*")}.get(
            mark, {git(self.tree, "rev-parse", "refs/bisect/new").strip()})
        if candidate not in recorded:
            raise BisectError(f"git bisect {mark.value} {candidate} was not recorded in {self.tree}", COULD_NOT_TEST)

    def first_new(self) -> list[str]:
        return self._remaining()

    def close(self) -> None:
        subprocess.run(["git", "-C", str(self.tree), "bisect", "reset", self.original], capture_output=True,
                       text=True, timeout=600)
        git(self.tree, "checkout", "-q", self.original)


@dataclass(frozen=True)
class Probe:
    """How one kernel is judged: one case of one reproducer program, repeated, as root."""

    binaries: Binaries  # holding just the program
    program: str
    case: str
    config: RunOptions
    work: Path

    def judge(self, kernel: Kernel, label: str) -> Probed:
        target = target_for(kernel, self.binaries.initramfs(self.work / "guest.cpio"))
        console = self.work / f"{label}.console.log"
        outcome = target.run(self.binaries, self.config, console)
        return probed_of(outcome, label, self.case, self.config.repeat, self.binaries.catalogue, kernel.origin,
                         console, target.describe(self.config))


def probed_of(outcome: KernelOutcome, label: str, case: str, repeat: int, catalogue: Catalogue,
              origin: Origin = Origin("file"), console: Path | None = None, runner: Runner | None = None) -> Probed:
    """One candidate's boot judged as a run's is (judgement.findings, every case of every pass that ran, the
    boot itself): the case's root verdict, or none and why; the step's problem, the first of a crash, a hang,
    a split, a kernel report, a refusal or a reproducer's error (gate.STEP_PROBLEM_OF)."""
    result = outcome.as_result(label, runner or Runner("qemu", repeat), origin)
    judged = step_verdict(outcome, result, case, catalogue)
    return dataclasses.replace(judged, booted=Booted(result, console)) if console is not None else judged


def step_verdict(outcome: KernelOutcome, result: KernelResult, case: str, catalogue: Catalogue) -> Probed:
    """The step's verdict and problem of probed_of()."""
    splatted = "; ".join(f"kernel splat: {s.title} ({s.where()})" for s in outcome.splats)
    kinds = {f.kind for f in findings([result], catalogue)}
    case_result = next((r for r in outcome.reproducers if r.name == case and r.privilege == "root"), None)
    problem = next((STEP_PROBLEM_OF[k] for k in STEP_PROBLEM_OF if k in kinds), "")
    if outcome.boot.status != "ok" or case_result is None:
        boot = f"boot {outcome.boot.status}: {outcome.boot.detail}" if outcome.boot.status != "ok" else \
            f"{case} was not reported"
        return Probed(None, "; ".join(filter(None, [boot, splatted])), problem=problem)
    runs = ", ".join(f"{v} x{n}" for v, n in case_result.runs.items())
    if case_result.verdict is Verdict.FLAKY:
        return Probed(case_result.verdict, "; ".join(filter(None, [f"split: {runs}", splatted])),
                      dict(case_result.runs), problem)
    if not case_result.verdict.is_kernel_verdict:
        return Probed(None, f"{case_result.verdict}: {case_result.reason}", problem=problem)
    return Probed(case_result.verdict, "; ".join(filter(None, [runs, splatted])), dict(case_result.runs), problem)


@dataclass(frozen=True)
class TreeTester:
    """Judges a commit of a kernel tree: check it out, build it (the builder is injected), boot it."""

    builder: KernelBuilder
    tree: Path
    fragments: tuple[Path, ...]
    probe: Probe
    progress: Progress

    def judge(self, candidate: str) -> Probed:
        git(self.tree, "checkout", "-q", candidate)
        try:
            built = self.builder.build(BuildRequest(self.tree, self.fragments), self.progress)
        except BuildError as e:
            return Probed(None, f"build failed: {e}")
        return self.probe.judge(file_kernel(built.image), candidate[:12])


def bisect_tree(builder: KernelBuilder, tree: Path, fragments: tuple[Path, ...], old: str, new: str,
                probe: Probe, progress: Progress, split: str = "old") -> BisectReport:
    """`old` has the old behaviour, `new` the new one (a regression or a fix alike); the tree is left
    on the branch or commit it was on."""
    if git(tree, "status", "--porcelain", "--untracked-files=no").strip():
        raise BisectError(f"{tree} has uncommitted changes: bisection checks out other commits", USAGE)
    # Names like HEAD move once an endpoint is checked out: pin both to commits now.
    old, new = (git(tree, "rev-parse", "--verify", f"{ref}^{{commit}}").strip() for ref in (old, new))
    search = GitSearch(tree)
    try:
        return bisect(search, TreeTester(builder, tree, fragments, probe, progress), old, new, progress, split=split)
    finally:
        git(tree, "checkout", "-q", search.original)


def debian_packages(cache: KernelCache, flavour: str, progress: Progress) -> list[Package]:
    """Every package of the flavour in the known suites, in Debian version order."""
    found: dict[tuple[str, str], Package] = {}
    arch = debian_names.arch_of(f"linux-image-{flavour}") or "amd64"  # rt-arm64, arm64-16k: arm64's archive
    for suite in SUITE_SOURCES:
        apt = cache.suite(suite, arch)
        apt.update(progress)
        for package in apt.packages(debian_names.any_version(flavour)):
            found.setdefault((package.name, package.version), package)
    apt_pkg.init_system()
    return sorted(found.values(), key=cmp_to_key(compare_versions))


@dataclass(frozen=True)
class PackageTester:
    fetch: Callable[[Package], Kernel]
    packages: dict[str, Package]  # by "name version"
    probe: Probe

    def judge(self, candidate: str) -> Probed:
        package = self.packages[candidate]
        try:
            kernel = self.fetch(package)
        except (DebianError, OSError) as e:  # skipped and said, the steps judged so far kept
            return Probed(None, f"could not be fetched: {e}")
        return self.probe.judge(kernel, f"{package.name}_{package.version}")


def bisect_debian(cache: KernelCache, flavour: str, probe: Probe, progress: Progress, jobs: int = 1,
                  between: tuple[Package, Package] | None = None, split: str = "old") -> BisectReport:
    """The first package, in Debian version order across the known suites, whose verdict differs
    from the oldest's (or from `between`'s first, searching only up to its second)."""
    ordered = debian_packages(cache, flavour, progress)
    if between is not None:
        low, high = between
        ordered = [p for p in ordered if compare_versions(low, p) <= 0 <= compare_versions(high, p)]
    if len(ordered) < 2:
        raise BisectError(f"fewer than two {flavour} kernel packages in {', '.join(SUITE_SOURCES)}", USAGE)
    progress.step(f"{len(ordered)} {flavour} packages from {ordered[0].version} to {ordered[-1].version}; "
                  f"about {math.ceil(math.log2(len(ordered)))} boots after both ends")
    names = [f"{p.name} {p.version}" for p in ordered]
    fetching = threading.Lock()  # one download at a time into the shared apt state; the boots run at once

    def fetch(package: Package) -> Kernel:
        with fetching:
            return cache.fetch(package, progress)

    tester = PackageTester(fetch, dict(zip(names, ordered)), probe)
    return bisect(ListSearch(names), tester, names[0], names[-1], progress, jobs, split)


def bisection_record(report: BisectReport, subject: str, over: str, commit: str, exit_code: int) -> BisectionRecord:
    return BisectionRecord(now(), commit, subject, over, report.old, report.new, list(report.first_changed),
                           report.last_old, report.confidence, list(report.steps), report.summary(subject), exit_code)
