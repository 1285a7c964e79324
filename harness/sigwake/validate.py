"""Patch validation: build a tree as it is and with the patches applied, boot
both, and say per reproducer case whether the patch fixes, regresses or does
not change it, or whether the evidence cannot say (inconclusive)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .binaries import Binaries
from .build import BuildRequest, BuiltKernel, KernelBuilder
from .guest import GuestConfig, GuestOutcome, run_guest
from .kernels import file_kernel
from .progress import Progress
from .results import ReproResult
from .verdicts import Verdict


@dataclass(frozen=True)
class CaseChange:
    case: str
    privilege: str
    outcome: str  # fixes, regresses, no change, inconclusive
    before: ReproResult
    after: ReproResult

    def __str__(self) -> str:
        def shown(r: ReproResult) -> str:
            evidence = " ".join(f"{k}={v}" for k, v in r.evidence.items() if k in ("records", "pollin", "signals"))
            return f"{r.verdict} ({evidence})" if evidence else str(r.verdict)
        return f"{self.case} [{self.privilege}]: {self.outcome}: {shown(self.before)} -> {shown(self.after)}"


def compare(before: ReproResult, after: ReproResult) -> str:
    if not (before.verdict.is_kernel_verdict and after.verdict.is_kernel_verdict):
        return "inconclusive"  # an error, a timeout, a failed boot or a flaky side says nothing about the patch
    if before.verdict is after.verdict:
        return "no change"
    if (before.verdict, after.verdict) == (Verdict.NOT_DELIVERED, Verdict.DELIVERED):
        return "fixes"
    if (before.verdict, after.verdict) == (Verdict.DELIVERED, Verdict.NOT_DELIVERED):
        return "regresses"
    return "inconclusive"


@dataclass
class Validation:
    base: BuiltKernel
    patched: BuiltKernel
    changes: list[CaseChange]


def pair(before: GuestOutcome, after: GuestOutcome) -> list[CaseChange]:
    after_by_key = {(r.privilege, r.name): r for r in after.reproducers}
    changes = []
    for b in before.reproducers:
        a = after_by_key.get((b.privilege, b.name))
        if a is not None:
            changes.append(CaseChange(b.name, b.privilege, compare(b, a), b, a))
    return changes


def validate_patch(builder: KernelBuilder, tree: Path, fragments: tuple[Path, ...], patch_files: tuple[Path, ...],
                   binaries: Binaries, config: GuestConfig, work: Path, progress: Progress) -> Validation:
    """Runs every program of `binaries` (select() them to narrow it) on both kernels."""
    base = builder.build(BuildRequest(tree, fragments), progress)
    patched = builder.build(BuildRequest(tree, fragments, patch_files), progress)
    programs = sorted(binaries.reproducers)
    initrd = binaries.initramfs(work / "guest.cpio")
    outcomes = {}
    for label, built in (("base", base), ("patched", patched)):
        progress.step(f"booting the {label} kernel ({built.tree_state[:12]}) under QEMU ({config.accel.name})")
        outcomes[label] = run_guest(file_kernel(built.image), initrd, programs, config, work / f"{label}.console.log")
    return Validation(base, patched, pair(outcomes["base"], outcomes["patched"]))
