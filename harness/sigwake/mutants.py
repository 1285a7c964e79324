"""The suite's kernel-mutant score: small deliberate bugs in the code that decides
these signals, kept as patches (bench/mutants/), applied to a kernel tree one at
a time and validated against the unpatched kernel, which boots once. A mutant is
detected when some case reports a change the patch caused."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .binaries import Binaries
from .build import BuildError, BuildRequest, KernelBuilder
from .guest import GuestConfig
from .progress import Progress
from .validate import CaseChange, boot_built, pair

# The outcomes that say "this kernel behaves differently"; inconclusive ones do not.
DETECTING = ("regresses", "changes", "fixes", "lost", "appeared")


@dataclass
class MutantResult:
    patch: Path
    changes: list[CaseChange] = field(default_factory=list)  # every case whose outcome is not "no change"
    build_error: str | None = None

    @property
    def name(self) -> str:
        return self.patch.stem

    @property
    def detected_by(self) -> list[CaseChange]:
        return [c for c in self.changes if c.outcome in DETECTING]

    @property
    def verdict(self) -> str:
        if self.build_error is not None:
            return "build failed"
        return "detected" if self.detected_by else "survived"


def score(builder: KernelBuilder, tree: Path, fragments: tuple[Path, ...], patches: list[Path], binaries: Binaries,
          config: GuestConfig, work: Path, progress: Progress) -> list[MutantResult]:
    """Every mutant in `patches`, each against one boot of the unpatched tree."""
    work.mkdir(parents=True, exist_ok=True)
    initrd = binaries.initramfs(work / "guest.cpio")
    base = builder.build(BuildRequest(tree, fragments), progress)
    before = boot_built(base, initrd, binaries, config, work / "base.console.log", "unpatched", progress)
    results = []
    for patch in patches:
        try:
            built = builder.build(BuildRequest(tree, fragments, (patch,)), progress)
        except BuildError as e:
            results.append(MutantResult(patch, build_error=str(e)))
            continue
        after = boot_built(built, initrd, binaries, config, work / f"{patch.stem}.console.log", patch.stem, progress)
        changes = [c for c in pair(before, after) if c.outcome != "no change"]
        results.append(MutantResult(patch, changes))
        progress.step(f"{patch.stem}: {results[-1].verdict} ({len(results[-1].detected_by)} cases changed)")
    return results


def table(results: list[MutantResult]) -> str:
    """A markdown table: mutant, the cases that changed and how, detected or survived; then the score."""
    lines = ["| mutant | cases that changed | verdict |", "|---|---|---|"]
    for r in results:
        shown = "; ".join(f"{c.case} [{c.privilege}] {c.outcome}: {c.before.verdict if c.before else 'missing'} -> "
                          f"{c.after.verdict if c.after else 'missing'}"
                          + (f" ({', '.join(c.differing)} changed)" if c.differing else "")
                          for c in r.detected_by) or (r.build_error or "none")
        lines.append(f"| {r.name} | {shown} | {r.verdict} |")
    detected = sum(r.verdict == "detected" for r in results)
    lines += ["", f"Score: {detected} of {len(results)} mutants detected."]
    return "\n".join(lines) + "\n"
