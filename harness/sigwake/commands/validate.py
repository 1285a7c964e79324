"""Patch validation: build a tree as it is and with the patches applied, boot
both, and say per reproducer case whether the patch fixes, regresses or does
not change it, or whether the base could not test it; and name every kernel
report the patched kernel printed that the base did not."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..programs.binaries import Binaries
from ..programs.catalogue import Catalogue
from ..judge.change import compare
from ..judge.gate import Gate, of_changes
from ..kernels.build import BuildError, BuildRequest, BuiltKernel, KernelBuilder
from ..targets.options import RunOptions
from ..targets.interpret import KernelOutcome
from ..kernels.kernels import file_kernel
from ..targets.registry import QemuTarget
from ..core.progress import Progress
from ..core.model import Runner
from ..core.outcomes import UNJUDGED, CaseChange, ValidationRecord, now
from ..core.verdicts import Verdict
from ..judge.judgement import BOOT_ENDINGS, Finding, kernel_findings, untested

RUNNER = Runner("qemu", 0)  # what booted both sides, for judging their boots as a run's are


class PatchedBuildFailed(BuildError):
    """The base tree built and the patched one did not: the patch's doing, a finding (not "could not test")."""


@dataclass
class Validation:
    base: BuiltKernel
    patched: BuiltKernel
    changes: list[CaseChange]
    reports: list[str] = field(default_factory=list)  # kernel reports the patched kernel printed, the base did not
    problems: list[Finding] = field(default_factory=list)  # the patched kernel's boot crashed or hung, the base's not

    @property
    def gate(self) -> Gate:
        """The command's judgement: what its exit code and last line come from."""
        return of_changes(self.changes, self.reports, self.problems)


def new_reports(before: KernelOutcome, after: KernelOutcome) -> list[str]:
    """Each kernel report of the patched kernel, outside every reported case (the boot, between cases), whose
    title the base did not print at the same place, every title counted (one in a case regresses it: pair())."""
    seen = Counter((s.privilege, s.case, s.title) for s in before.splats)
    cases = {(r.privilege, r.name) for r in after.reproducers}
    found = []
    for s in (s for s in after.splats if (s.privilege, s.case) not in cases):
        key = (s.privilege, s.case, s.title)
        if seen[key]:
            seen[key] -= 1
        else:
            found.append(f"{s.title} ({s.where()}, console line {s.console_line})")
    return found


def boot_problems(before: KernelOutcome, after: KernelOutcome) -> list[Finding]:
    """A crash or hang of the patched kernel's boot (judgement.kernel_findings) of a kind the base's boot did
    not show: e.g. a kernel that hangs at power-off after every case reported."""
    base = {f.kind for f in kernel_findings(before.as_result("base", RUNNER))}
    return [Finding("patched", f.kind, f"the patched kernel's boot: {f.text}")
            for f in kernel_findings(after.as_result("patched", RUNNER)) if f.kind in BOOT_ENDINGS
            and f.kind not in base]


def never_started(outcome: KernelOutcome) -> str | None:
    """Why nothing of the kernel started (the target's doing: judgement.untested), or None; a kernel whose boot
    the target ended later is paired case by case (its cases then, its reports, still count)."""
    return None if outcome.boot.target_failed else untested(outcome.as_result("kernel", RUNNER))


def pair(before: KernelOutcome, after: KernelOutcome, catalogue: Catalogue) -> list[CaseChange]:
    """Every case of either side; one that ran on one kernel only is "lost" (the patched kernel lost it) or,
    for the base, "could not test". A kernel report (splat) on the patched kernel while a case ran, which the
    base did not print for it, regresses that case whatever its verdict. A patched kernel that never started
    (nothing booted: the target's doing) could test nothing; a case the target cut off (its boot ended from
    outside) could not be tested."""
    before_by_key = {(r.privilege, r.name): r for r in before.reproducers}
    after_by_key = {(r.privilege, r.name): r for r in after.reproducers}
    if (why := never_started(after)) is not None:
        return [CaseChange(r.name, r.privilege, UNJUDGED, before_by_key.get((r.privilege, r.name)), r, (),
                           f"the patched kernel never started: {why}") for r in after.reproducers]
    titles = {side: Counter((s.privilege, s.case, s.title) for s in outcome.splats)
              for side, outcome in (("before", before), ("after", after))}
    changes = []
    for key in dict.fromkeys([*before_by_key, *after_by_key]):
        b, a = before_by_key.get(key), after_by_key.get(key)
        splats = [t for (p, c, t), n in titles["after"].items() if (p, c) == key and n > titles["before"][(p, c, t)]]
        if splats and a is not None:
            changes.append(CaseChange(key[1], key[0], "regresses", b, a, (), f"kernel splat: {'; '.join(splats)}"))
        elif b is not None and a is not None and after.boot.target_failed and \
                a.verdict in (Verdict.BOOT_FAILED, Verdict.TIMEOUT):
            changes.append(CaseChange(key[1], key[0], UNJUDGED, b, a, (), f"the target ended the patched kernel's "
                                                                            f"boot: {after.boot.target_failed}"))
        elif b is not None and a is not None:
            outcome, differing, how = compare(b, a, catalogue, before.release or "")
            changes.append(CaseChange(key[1], key[0], outcome, b, a, differing, how))
        elif a is None:
            changes.append(CaseChange(key[1], key[0], "lost", b, a, (), "the patched kernel did not report it"))
        else:
            changes.append(CaseChange(key[1], key[0], UNJUDGED, b, a, (), "the base kernel did not report it"))
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
    try:
        patched = builder.build(BuildRequest(tree, fragments, patch_files), progress)
    except BuildError as e:
        raise PatchedBuildFailed(f"the base built, the patched tree does not: {e}") from e
    initrd = binaries.initramfs(work / "guest.cpio")
    boots = [(base, "base"), (patched, "patched")]
    with ThreadPoolExecutor(max_workers=min(max(jobs, 1), 2)) as pool:
        before, after = pool.map(lambda b: boot_built(b[0], initrd, binaries, config, work / f"{b[1]}.console.log",
                                                      b[1], progress), boots)
    return Validation(base, patched, pair(before, after, binaries.catalogue), new_reports(before, after),
                      boot_problems(before, after))


def validation_record(validation: Validation, tree: str, patches: list[str], passes: list[str], repeat: int,
                      commit: str, last_line: str, exit_code: int) -> ValidationRecord:
    return ValidationRecord(now(), commit, tree, validation.base.tree_state, validation.patched.tree_state, patches,
                            passes, repeat, list(validation.changes), last_line, exit_code,
                            [*validation.reports, *(f"{p.kind}: {p.text}" for p in validation.problems)])
