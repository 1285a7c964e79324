"""Patch validation: build a tree as it is and with the patches applied, boot
both, and say per reproducer case whether the patch fixes, regresses or does
not change it, or whether the evidence cannot say (inconclusive)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from . import expectations
from .binaries import Binaries
from .catalogue import Catalogue
from .judgement import intermittent
from .build import BuildRequest, BuiltKernel, KernelBuilder
from .guest import GuestConfig, GuestOutcome
from .kernels import file_kernel
from .targets import QemuTarget
from .progress import Progress
from .verdicts import Verdict
from .model import ReproResult


OUTCOMES = ("fixes", "regresses", "changes", "no change", "inconclusive", "lost", "appeared")
FINDINGS = ("regresses", "changes", "lost")  # what the patch did that a gate must stop on (exit 1)


@dataclass(frozen=True)
class CaseChange:
    case: str
    privilege: str
    outcome: str  # one of OUTCOMES
    before: ReproResult | None  # None: the case did not run on the base kernel
    after: ReproResult | None  # None: it did not run on the patched kernel
    differing: tuple[str, ...] = ()  # defining evidence keys whose values changed
    qualifier: str = ""  # "intermittent 2/5", "kernel splat: WARNING in ...": how the outcome came about

    @property
    def is_finding(self) -> bool:
        return self.outcome in FINDINGS

    def __str__(self) -> str:
        def shown(r: ReproResult | None) -> str:
            if r is None:
                return "missing"
            keys = ("records", "pollin", "signals", *self.differing)
            evidence = " ".join(f"{k}={r.evidence[k]}" for k in dict.fromkeys(keys) if k in r.evidence)
            return f"{r.verdict} ({evidence})" if evidence else f"{r.verdict}: {r.reason}" if r.reason else str(r.verdict)
        what = f" ({', '.join(self.differing)} changed)" if self.differing else ""
        how = f" ({self.qualifier})" if self.qualifier else ""
        return f"{self.case} [{self.privilege}]: {self.outcome}{how}{what}: {shown(self.before)} -> {shown(self.after)}"


def differing_evidence(before: ReproResult, after: ReproResult, catalogue: Catalogue) -> tuple[str, ...]:
    """The evidence the case's facts call defining (which signal, why, the counts a kernel bug can change while
    the verdict word stays), compared where both sides report it."""
    return tuple(k for k in catalogue.defining(before.name)
                 if k in before.evidence and k in after.evidence and before.evidence[k] != after.evidence[k])


def compare(before: ReproResult, after: ReproResult, catalogue: Catalogue) -> tuple[str, tuple[str, ...], str]:
    """The outcome for one case, the defining evidence that changed, and how ("intermittent k/n": the
    patched kernel's runs split, k of n not the correct verdict). "fixes" and "regresses" are judged
    against the behaviour of a kernel with every known fix (the cases' facts)."""
    correct = expectations.correct(catalogue, before.name, before.privilege)
    if before.verdict.is_kernel_verdict and after.verdict is Verdict.FLAKY:
        # The patched kernel shows another behaviour in some runs: never a pass.
        k, n, others = intermittent(after, correct) or (0, 0, "")
        how = f"intermittent {k}/{n}: {others}"
        return ("regresses" if before.verdict is correct else "changes"), (), how
    if before.verdict.is_kernel_verdict and after.verdict in (Verdict.ERROR, Verdict.TIMEOUT, Verdict.BOOT_FAILED):
        # The same programs reached a verdict on the base kernel: what stops them now is the patch
        # (a syscall it makes fail, a signal they never expected, a kernel that hangs or dies).
        return "lost", (), ""
    if not (before.verdict.is_kernel_verdict and after.verdict.is_kernel_verdict):
        return "inconclusive", (), ""  # an error, a timeout, a failed boot or a split base says nothing
    differing = differing_evidence(before, after, catalogue)
    if before.verdict is after.verdict and not differing:
        return "no change", (), ""
    if correct is not None and after.verdict is correct and before.verdict is not correct:
        return "fixes", differing, ""
    if correct is not None and before.verdict is correct:
        return "regresses", differing, ""
    return "changes", differing, ""


@dataclass
class Validation:
    base: BuiltKernel
    patched: BuiltKernel
    changes: list[CaseChange]


def pair(before: GuestOutcome, after: GuestOutcome, catalogue: Catalogue) -> list[CaseChange]:
    """Every case of either side; one that ran on one kernel only is "lost" or "appeared". A kernel report
    (splat) on the patched kernel while a case ran, which the base did not print for it, regresses that case
    whatever its verdict."""
    before_by_key = {(r.privilege, r.name): r for r in before.reproducers}
    after_by_key = {(r.privilege, r.name): r for r in after.reproducers}
    titles = {side: {(s.privilege, s.case): s.title for s in outcome.splats}
              for side, outcome in (("before", before), ("after", after))}
    changes = []
    for key in dict.fromkeys([*before_by_key, *after_by_key]):
        b, a = before_by_key.get(key), after_by_key.get(key)
        splat = titles["after"].get(key)
        if splat is not None and a is not None and titles["before"].get(key) != splat:
            changes.append(CaseChange(key[1], key[0], "regresses", b, a, (), f"kernel splat: {splat}"))
        elif b is not None and a is not None:
            outcome, differing, how = compare(b, a, catalogue)
            changes.append(CaseChange(key[1], key[0], outcome, b, a, differing, how))
        else:
            changes.append(CaseChange(key[1], key[0], "lost" if a is None else "appeared", b, a))
    return changes


def boot_built(built: BuiltKernel, initrd: Path, binaries: Binaries, config: GuestConfig, console_log: Path,
               label: str, progress: Progress) -> GuestOutcome:
    progress.step(f"booting the {label} kernel ({built.tree_state[:12]}) under QEMU ({config.accel.name})")
    return QemuTarget(file_kernel(built.image), initrd).run(binaries, config, console_log)


def validate_patch(builder: KernelBuilder, tree: Path, fragments: tuple[Path, ...], patch_files: tuple[Path, ...],
                   binaries: Binaries, config: GuestConfig, work: Path, progress: Progress,
                   jobs: int = 1) -> Validation:
    """Runs every program of `binaries` (select() them to narrow it) on both kernels; with `jobs` > 1
    both boot at once."""
    base = builder.build(BuildRequest(tree, fragments), progress)
    patched = builder.build(BuildRequest(tree, fragments, patch_files), progress)
    initrd = binaries.initramfs(work / "guest.cpio")
    boots = [(base, "base"), (patched, "patched")]
    with ThreadPoolExecutor(max_workers=min(max(jobs, 1), 2)) as pool:
        before, after = pool.map(lambda b: boot_built(b[0], initrd, binaries, config, work / f"{b[1]}.console.log",
                                                      b[1], progress), boots)
    return Validation(base, patched, pair(before, after, binaries.catalogue))
