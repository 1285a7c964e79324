"""The suite's kernel-mutant score: small deliberate bugs in the code that decides
these signals, kept as patches (bench/mutants/), applied to a kernel tree one at
a time and validated against the unpatched kernel, which boots once. Noise never
kills a mutant: both boots must be good (a failed boot is booted once more; a base
that fails twice stops the score), and a case kills it only with a difference
that holds in every repeat: a verdict that changed in every run, or defining
evidence, or a kernel report under a case, that changed in the first boot and
again in a second boot of the mutant (the result keeps one run's evidence). A
mutant kernel that dies or hangs under a case in both of its boots is killed by
that case, as the suite would report it (a crash under a case is a finding),
whatever report it printed, unless the unpatched kernel died under that case in
a boot of its own; the cases its boots never reached say nothing, so its boots
do not go on in fresh ones (a kernel that hangs under every case would otherwise
be booted once per case, twice; the history score judges alike). A change that
needs a second boot to kill, in a case that second boot never reached, leaves
the mutant undecided (boot failed), never survived. A mutant whose kernel's
code (vmlinux .text, .rodata and .data) is the unpatched kernel's byte for byte
is equivalent, with that proof, and is not booted."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..programs.binaries import Binaries
from ..kernels.build import BuildError, BuildRequest, BuiltKernel, KernelBuilder
from ..targets.options import RunOptions
from ..targets.interpret import KernelOutcome
from ..core.progress import Progress
from ..core.model import CUT_OFF, NEVER_RAN
from ..core.outcomes import FINDINGS, CaseChange
from .validate import boot_built, pair
from ..core.verdicts import Verdict

# The outcomes that say "this kernel behaves differently"; "could not test" does not.
DETECTING = (*FINDINGS, "fixes")

# Boots a built kernel under a label ("unpatched", a mutant's name, "... again"): the real one boots it under
# QEMU; tests give a fake.
Boot = Callable[[BuiltKernel, str], KernelOutcome]


class BaseBootError(RuntimeError):
    """The unpatched kernel did not boot cleanly twice: no mutant can be judged against it."""


@dataclass
class MutantResult:
    patch: Path
    changes: list[CaseChange] = field(default_factory=list)  # every case whose outcome is not "no change"
    build_error: str | None = None
    boot_error: str | None = None  # its boots failed twice, or left it undecided (neither killed nor survived)
    died: str = ""  # how the mutant kernel died or hung under a case in both boots (the cases cut off kill it)
    died_under: list[CaseChange] = field(default_factory=list)  # the changes of the cases it died under twice
    confirmed: list[CaseChange] = field(default_factory=list)  # evidence or splat changes seen again in a second boot
    same_code: bool = False  # its kernel's code is the unpatched kernel's: equivalent, with proof

    @property
    def name(self) -> str:
        return self.patch.stem

    @property
    def detected_by(self) -> list[CaseChange]:
        """The changes that kill it: a verdict changed in every run, or evidence changed in two boots."""
        return [c for c in self.changes if solid(c) and c not in self.died_under] + self.died_under + self.confirmed

    @property
    def verdict(self) -> str:
        if self.build_error is not None:
            return "build failed"
        if self.same_code:
            return "equivalent"
        if self.boot_error is not None:
            return "boot failed"
        return "detected" if self.detected_by else "survived"


def splat(change: CaseChange) -> bool:
    """The mutant kernel reported a bug of its own under the case."""
    return change.qualifier.startswith(SPLAT)


def solid(change: CaseChange) -> bool:
    """A change in the verdict in every run of both sides (no split, no case lost on both), not a kernel report
    (one boot's report may be noise: it kills once it recurs in a second boot)."""
    if splat(change) or change.outcome not in DETECTING or change.qualifier.startswith("intermittent"):
        return False
    sides = [r for r in (change.before, change.after) if r is not None]
    if any(r.verdict is Verdict.FLAKY for r in sides):
        return False
    return change.before is None or change.after is None or change.before.verdict is not change.after.verdict


def needs_second_boot(change: CaseChange) -> bool:
    """A change that kills only when a second boot of the mutant shows it again: defining evidence alone, or a
    kernel report."""
    return change.outcome in DETECTING and not solid(change) and (bool(change.differing) or splat(change))


SPLAT = "kernel splat: "


def recurs(change: CaseChange, second: list[CaseChange]) -> bool:
    """Whether the second boot shows the change again: the same case and pass with the same evidence changed, or
    (a kernel report) one of the same report titles under it."""
    for other in second:
        if (other.privilege, other.case) != (change.privilege, change.case):
            continue
        if splat(change):
            if splat(other) and set(titles(change)) & set(titles(other)):
                return True
        elif other.differing == change.differing:
            return True
    return False


def titles(change: CaseChange) -> list[str]:
    return change.qualifier[len(SPLAT):].split("; ") if splat(change) else []


def cut_off(outcome: KernelOutcome) -> set[tuple[str, str]]:
    """The (pass, case) runs the kernel died or hung under."""
    return {(r.privilege, r.name) for r in outcome.reproducers if r.reason.startswith(CUT_OFF)}


def judging_options(config: RunOptions) -> RunOptions:
    """The options a mutant's kernel and the unpatched one boot with: no fresh boots after a crash or hang, since
    the case it died under in both boots is what kills it and the cases after it say nothing."""
    return replace(config, fresh_boots=False)


@dataclass(frozen=True)
class Booted:
    """good_boot()'s answer: the boot to judge by (None: neither finished, nor died alike), why the boots did not
    finish, the cases both died or hung under, and those any failed boot died or hung under."""

    outcome: KernelOutcome | None
    why: str = ""
    died_under: frozenset[tuple[str, str]] = frozenset()
    crashed_under: frozenset[tuple[str, str]] = frozenset()


def good_boot(boot: Boot, built: BuiltKernel, label: str, died_under_a_case: bool = False,
              flaky: frozenset[tuple[str, str]] = frozenset()) -> Booted:
    """A boot that finished, booted once more when the first did not. With `died_under_a_case`, two boots that
    both died or hung under one same case give the second, and that case (a kernel that died before any case, or
    not twice alike, blames none); a case in `flaky` (the unpatched kernel died under it too) is never blamed."""
    first = boot(built, label)
    if first.boot.status == "ok":
        return Booted(first)
    second = boot(built, f"{label} again")
    if second.boot.status == "ok":
        return Booted(second, crashed_under=frozenset(cut_off(first)))
    why = f"{first.boot.status}: {first.boot.detail}; again {second.boot.status}: {second.boot.detail}"
    crashed = frozenset(cut_off(first) | cut_off(second))
    died = frozenset(cut_off(first) & cut_off(second)) - flaky if died_under_a_case else frozenset()
    return Booted(second if died else None, why, died, crashed)


def unreached(change: CaseChange, again: Booted) -> bool:
    """Whether a second boot, booted to see `change` again, never ran its case to the end."""
    if again.outcome is None:
        return True
    ran = {(r.privilege, r.name): r for r in again.outcome.reproducers}.get((change.privilege, change.case))
    return ran is None or ran.reason.startswith((CUT_OFF, NEVER_RAN))


def score(builder: KernelBuilder, tree: Path, fragments: tuple[Path, ...], patches: list[Path], binaries: Binaries,
          config: RunOptions, work: Path, progress: Progress, boot: Boot | None = None,
          after_each: Callable[[MutantResult], None] | None = None) -> list[MutantResult]:
    """Every mutant in `patches`, each against one good boot of the unpatched tree; `after_each` is told each
    result as soon as it exists (a long score keeps what it judged)."""
    work.mkdir(parents=True, exist_ok=True)
    initrd = binaries.initramfs(work / "guest.cpio")
    judging = judging_options(config)
    boot = boot or (lambda built, label: boot_built(built, initrd, binaries, judging,
                                                    work / f"{label.replace(' ', '-')}.console.log", label, progress))
    base = builder.build(BuildRequest(tree, fragments), progress)
    unpatched = good_boot(boot, base, "unpatched")
    before = unpatched.outcome
    if before is None:
        raise BaseBootError(f"the unpatched kernel did not boot cleanly twice ({unpatched.why}): the score stops")
    # A case that errs on the unpatched kernel errs on every mutant too: it could kill none, and would pass for
    # a case that saw nothing (a reproducer that needs what the scored kernel lacks). Stop and say which.
    broken = [f"{r.name} [{r.privilege}]: {r.reason}" for r in before.reproducers if not r.verdict.is_kernel_verdict
              and r.verdict is not Verdict.FLAKY]
    if broken:
        raise BaseBootError("cases erred on the unpatched kernel, so they could judge no mutant: "
                            + "; ".join(broken[:5]) + (f" (and {len(broken) - 5} more)" if len(broken) > 5 else "")
                            + ": the score stops")
    results: list[MutantResult] = []

    def judged(result: MutantResult) -> None:
        results.append(result)
        progress.step(f"{result.name}: {result.verdict} ({len(result.detected_by)} cases changed)")
        if after_each is not None:
            after_each(result)

    for patch in patches:
        try:
            built = builder.build(BuildRequest(tree, fragments, (patch,)), progress)
        except BuildError as e:
            judged(MutantResult(patch, build_error=str(e)))
            continue
        if built.code and built.code == base.code:
            judged(MutantResult(patch, same_code=True))
            continue
        booted = good_boot(boot, built, patch.stem, died_under_a_case=True, flaky=unpatched.crashed_under)
        if booted.outcome is None:
            judged(MutantResult(patch, boot_error=booted.why))
            continue
        changes = [c for c in pair(before, booted.outcome, binaries.catalogue) if c.outcome != "no change"]
        if booted.why:  # it died under a case: the cases its boots never reached say nothing
            changes = [c for c in changes if c.after is not None and not c.after.reason.startswith(NEVER_RAN)]
        result = MutantResult(patch, changes, died=booted.why,
                              died_under=[c for c in changes if (c.privilege, c.case) in booted.died_under])
        if not result.detected_by and any(needs_second_boot(c) for c in result.changes):
            again = good_boot(boot, built, f"{patch.stem} second", died_under_a_case=True,
                              flaky=unpatched.crashed_under)
            second = pair(before, again.outcome, binaries.catalogue) if again.outcome else []
            result.confirmed = [c for c in result.changes if needs_second_boot(c) and recurs(c, second)]
            result.died_under = [c for c in second if (c.privilege, c.case) in again.died_under]
            missed = [c for c in result.changes if needs_second_boot(c) and unreached(c, again)]
            if not result.detected_by and missed:
                result.boot_error = (f"undecided: the second boot, to see {missed[0].case} [{missed[0].privilege}] "
                                     f"again, never ran it to the end ({again.why or 'cut off'})")
        judged(result)
    return results


def table(results: list[MutantResult]) -> str:
    """A markdown table: mutant, the cases that changed and how, detected or survived; then the score."""
    lines = ["| mutant | cases that changed | verdict |", "|---|---|---|"]
    for r in results:
        shown = "; ".join(f"{c.case} [{c.privilege}] {c.outcome}: {c.before.verdict if c.before else 'missing'} -> "
                          f"{c.after.verdict if c.after else 'missing'}"
                          + (f" ({', '.join(c.differing)} changed)" if c.differing else "")
                          for c in r.detected_by) or (r.build_error or r.boot_error or "none")
        lines.append(f"| {r.name} | {shown} | {r.verdict} |")
    detected = sum(r.verdict == "detected" for r in results)
    lines += ["", f"Score: {detected} of {len(results)} mutants detected."]
    return "\n".join(lines) + "\n"
