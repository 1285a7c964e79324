"""Bisection of a kernel tree with `git bisect run`, or of Debian's packages of
one flavour: the first commit (package) whose behaviour changed. Both endpoints
are checked first; a build or boot failure, or repeated runs that disagree,
make a step a skip (125), as syzkaller's bisection does, with a note."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cmp_to_key
from pathlib import Path

import apt_pkg

from .binaries import Binaries
from .build import BuildError, BuildRequest, KernelBuilder, git
from .guest import GuestConfig, run_guest
from .debian import SUITE_SOURCES, Package, compare_versions
from .kernels import Kernel, KernelCache, file_kernel
from .progress import Progress
from .verdicts import Verdict

SKIP = 125


@dataclass(frozen=True)
class Probe:
    """How one kernel is judged: one case of one reproducer program, repeated."""

    binaries: Binaries  # holding just the program
    program: str
    case: str
    config: GuestConfig
    work: Path

    def judge(self, kernel: Kernel, label: str) -> tuple[Verdict | None, str]:
        """The unanimous kernel verdict, or None and why not."""
        outcome = run_guest(kernel, self.binaries.initramfs(self.work / "guest.cpio"), [self.program], self.config,
                            self.work / f"{label}.console.log")
        if outcome.boot.status != "ok":
            return None, f"boot {outcome.boot.status}: {outcome.boot.detail}"
        result = next((r for r in outcome.reproducers if r.name == self.case and r.privilege == "root"), None)
        if result is None:
            return None, f"{self.case} was not reported"
        if result.verdict is Verdict.FLAKY:
            return None, f"split: {result.runs}"
        if not result.verdict.is_kernel_verdict:
            return None, f"{result.verdict}: {result.reason}"
        return result.verdict, f"{result.verdict} x{sum(result.runs.values())}"


@dataclass
class Step:
    commit: str
    verdict: str | None
    note: str
    exit_code: int


@dataclass
class BisectReport:
    first_changed: list[str]  # one commit; several when skips left a range
    old: Verdict
    new: Verdict
    steps: list[Step] = field(default_factory=list)
    confidence: float = 0.0

    def summary(self, subject: str) -> str:
        judged = [s for s in self.steps if s.exit_code != SKIP]
        what = self.first_changed[0] if len(self.first_changed) == 1 else f"one of {', '.join(self.first_changed)}"
        return (f"first commit where {subject} went from {self.old} to {self.new}: {what}\n"
                f"builds: {len(self.steps)} ({len(judged)} judged, {len(self.steps) - len(judged)} skipped); "
                f"confidence {self.confidence:.2f}")


def judge_commit(builder: KernelBuilder, tree: Path, fragments: tuple[Path, ...], probe: Probe,
                 progress: Progress) -> tuple[Verdict | None, str]:
    try:
        built = builder.build(BuildRequest(tree, fragments), progress)
    except BuildError as e:
        return None, f"build failed: {e}"
    return probe.judge(file_kernel(built.image), built.tree_state[:12])


def step_exit(verdict: Verdict | None, old: Verdict, new: Verdict) -> int:
    if verdict is old:
        return 0
    if verdict is new:
        return 1
    return SKIP


def step_command(builder: KernelBuilder, tree: Path, fragments: tuple[Path, ...], probe: Probe) -> list[str]:
    """`sigwake bisect-step` with this bisection's settings, for `git bisect run`."""
    repro = f"{probe.program}:{probe.case}"
    return [sys.executable, "-m", "sigwake.cli", "bisect-step", "--tree", str(tree.resolve()), "--repro", repro,
            "--cache", str(builder.cache.resolve()), "--jobs", str(builder.jobs), "--accel", probe.config.accel.name,
            *(["--ccache", str(builder.ccache.resolve())] if builder.ccache else []),
            "--repeat", str(probe.config.repeat), *[a for f in fragments for a in ("--fragment", str(f.resolve()))]]


def bisect_tree(builder: KernelBuilder, tree: Path, fragments: tuple[Path, ...], good: str, bad: str, fixed: bool,
                probe: Probe, progress: Progress) -> BisectReport:
    """`good` has the old behaviour, `bad` the new; with `fixed` the new one is the fix."""
    if git(tree, "status", "--porcelain", "--untracked-files=no").strip():
        raise BuildError(f"{tree} has uncommitted changes: bisection checks out other commits")
    branch = subprocess.run(["git", "-C", str(tree), "symbolic-ref", "-q", "--short", "HEAD"], capture_output=True,
                            text=True)
    original = branch.stdout.strip() if branch.returncode == 0 else git(tree, "rev-parse", "HEAD").strip()
    # Names like HEAD move once we check out an endpoint: pin both to commits now.
    good, bad = (git(tree, "rev-parse", "--verify", f"{ref}^{{commit}}").strip() for ref in (good, bad))
    old_term, new_term = ("broken", "fixed") if fixed else ("good", "bad")
    steps_log = probe.work / "steps.jsonl"
    steps_log.unlink(missing_ok=True)
    try:
        verdicts = {}
        for name, commit in (("old", good), ("new", bad)):
            git(tree, "checkout", "-q", commit)
            verdicts[name], note = judge_commit(builder, tree, fragments, probe, progress)
            progress.step(f"endpoint {commit}: {note}")
            if verdicts[name] is None:
                raise BuildError(f"endpoint {commit} cannot be judged: {note}")
        old, new = verdicts["old"], verdicts["new"]
        assert old is not None and new is not None
        if old is new:
            raise BuildError(f"both endpoints are {old}: nothing to bisect")
        git(tree, "bisect", "start", f"--term-old={old_term}", f"--term-new={new_term}", bad, good)
        command = [*step_command(builder, tree, fragments, probe), "--old", str(old), "--new", str(new),
                   "--steps-log", str(steps_log)]
        harness = str(Path(__file__).resolve().parents[1])  # so that the step finds this package
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [harness, os.environ.get("PYTHONPATH")]))}
        done = subprocess.run(["git", "-C", str(tree), "bisect", "run", *command], capture_output=True, text=True,
                              env=env)
        (probe.work / "bisect-run.log").write_text(done.stdout + done.stderr)
        first = re.findall(rf"^([0-9a-f]{{40}}) is the first {new_term} commit", done.stdout, re.M)
        if not first:
            candidates = re.findall(r"^([0-9a-f]{40})$", done.stdout, re.M)
            if not candidates:
                raise BuildError(f"git bisect run ended without an answer; see {probe.work / 'bisect-run.log'}")
            first = candidates
    finally:
        # Leave the tree on the branch (or commit) it was on, bisection or not.
        subprocess.run(["git", "-C", str(tree), "bisect", "reset", original], capture_output=True, text=True)
        git(tree, "checkout", "-q", original)
    steps = [Step(**json.loads(line)) for line in steps_log.read_text().splitlines()] if steps_log.exists() else []
    # Every judged step was unanimous over its runs; what lowers confidence is a range left by skips.
    return BisectReport(first, old, new, steps, 1.0 / len(first))


def run_step(builder: KernelBuilder, tree: Path, fragments: tuple[Path, ...], probe: Probe, old: Verdict,
             new: Verdict, steps_log: Path, progress: Progress) -> int:
    """One `git bisect run` step: 0 for the old behaviour, 1 for the new, 125 to skip."""
    commit = git(tree, "rev-parse", "HEAD").strip()
    verdict, note = judge_commit(builder, tree, fragments, probe, progress)
    code = step_exit(verdict, old, new)
    with steps_log.open("a") as log:
        log.write(json.dumps({"commit": commit, "verdict": str(verdict) if verdict else None, "note": note,
                              "exit_code": code}) + "\n")
    print(f"sigwake: {commit[:12]}: {note} -> {code}", file=sys.stderr)
    return code


# A Debian kernel package of one flavour: linux-image-6.1.0-57-amd64, linux-image-6.12.95+deb12-amd64,
# linux-binary-7.2.13+deb14-amd64 (the ABI must end right before the flavour, or -cloud-amd64 would match).
def flavour_pattern(flavour: str) -> str:
    return rf"linux-(image|binary)-\d+\.\d+(\.\d+)?(-\d+|\+deb\d+(\.\d+)?)-{re.escape(flavour)}"


@dataclass
class DebianBisectReport:
    first_changed: str  # package and version
    last_old: str
    old: Verdict
    new: Verdict
    tested: list[tuple[str, str]]  # (package version, verdict or why not)
    candidates: int


def bisect_debian(cache: KernelCache, flavour: str, probe: Probe, progress: Progress) -> DebianBisectReport:
    """The first package, in Debian version order across the known suites, whose verdict differs from the oldest's."""
    found: dict[tuple[str, str], Package] = {}
    for suite in SUITE_SOURCES:
        apt = cache.suite(suite)
        apt.update(progress)
        for package in apt.packages(flavour_pattern(flavour)):
            found.setdefault((package.name, package.version), package)
    apt_pkg.init_system()
    ordered = sorted(found.values(), key=cmp_to_key(compare_versions))
    if len(ordered) < 2:
        raise BuildError(f"fewer than two {flavour} kernel packages in {', '.join(SUITE_SOURCES)}")
    progress.step(f"{len(ordered)} {flavour} packages from {ordered[0].version} to {ordered[-1].version}")
    tested: list[tuple[str, str]] = []

    def judge(index: int) -> Verdict | None:
        package = ordered[index]
        verdict, note = probe.judge(cache.fetch(package, progress), f"{package.name}_{package.version}")
        tested.append((f"{package.name} {package.version}", note))
        progress.step(f"{package.name} {package.version}: {note}")
        return verdict

    old, new = judge(0), judge(len(ordered) - 1)
    if old is None or new is None or old is new:
        raise BuildError(f"the oldest and newest packages do not differ in a judged way: {tested}")
    lo, hi = 0, len(ordered) - 1  # lo has the old verdict, hi the new one
    while hi - lo > 1:
        mid = (lo + hi) // 2
        verdict = None
        for probe_index in [mid, *range(mid + 1, hi), *range(mid - 1, lo, -1)]:  # step past skips
            verdict = judge(probe_index)
            if verdict is not None:
                mid = probe_index
                break
        if verdict is None:
            break
        lo, hi = (mid, hi) if verdict is old else (lo, mid)
    return DebianBisectReport(f"{ordered[hi].name} {ordered[hi].version}", f"{ordered[lo].name} {ordered[lo].version}",
                              old, new, tested, len(ordered))
