"""Patch validation: build a tree as it is and with the patches applied, boot
both, and say per reproducer case whether the patch fixes, regresses or does
not change it, or whether the evidence cannot say (inconclusive)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..programs.binaries import Binaries
from ..programs.catalogue import Catalogue
from ..judge.change import compare
from ..kernels.build import BuildRequest, BuiltKernel, KernelBuilder
from ..targets.options import RunOptions
from ..targets.interpret import KernelOutcome
from ..kernels.kernels import file_kernel
from ..targets.registry import QemuTarget
from ..core.progress import Progress
from ..core.outcomes import CaseChange, ValidationRecord, now


@dataclass
class Validation:
    base: BuiltKernel
    patched: BuiltKernel
    changes: list[CaseChange]


def pair(before: KernelOutcome, after: KernelOutcome, catalogue: Catalogue) -> list[CaseChange]:
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


def boot_built(built: BuiltKernel, initrd: Path, binaries: Binaries, config: RunOptions, console_log: Path,
               label: str, progress: Progress) -> KernelOutcome:
    progress.step(f"booting the {label} kernel ({built.tree_state[:12]}) under QEMU ({config.accel.name})")
    return QemuTarget(file_kernel(built.image), initrd).run(binaries, config, console_log)


def validate_patch(builder: KernelBuilder, tree: Path, fragments: tuple[Path, ...], patch_files: tuple[Path, ...],
                   binaries: Binaries, config: RunOptions, work: Path, progress: Progress,
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


def validation_record(validation: Validation, tree: str, patches: list[str], passes: list[str], repeat: int,
                      commit: str, last_line: str, exit_code: int) -> ValidationRecord:
    return ValidationRecord(now(), commit, tree, validation.base.tree_state, validation.patched.tree_state, patches,
                            passes, repeat, list(validation.changes), last_line, exit_code)
