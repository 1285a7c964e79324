"""Flavours side by side: a Debian cloud, rt or 16k kernel is built from the same
source package as the generic one of its version, so any case it judges
otherwise is a finding about that flavour, named here for every renderer."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.model import LOCAL, KernelResult, ReproResult
from ..core.verdicts import Verdict


@dataclass(frozen=True)
class FlavourFinding:
    kernel_id: str
    generic_id: str
    privilege: str
    case: str
    verdict: str
    generic_verdict: str

    def __str__(self) -> str:
        return (f"{self.kernel_id} ({self.privilege}) {self.case}: {self.verdict}, where the generic "
                f"{self.generic_id} is {self.generic_verdict}")


KERNEL_WORDS = frozenset(str(v) for v in Verdict if v.is_kernel_verdict)


def kernel_said(case: ReproResult) -> str | None:
    """What the kernel did in a case, from the runs that say it: its verdict; for a split case, the one verdict
    its runs gave where the others were not the kernel's to give (a run a crash cut off), else "flaky"; None
    where no run says what the kernel did (a failed boot is reported as such)."""
    if case.verdict.is_kernel_verdict:
        return str(case.verdict)
    if case.verdict is not Verdict.FLAKY:
        return None
    said = {word for word in case.runs if word in KERNEL_WORDS}
    return next(iter(said)) if len(said) == 1 else str(Verdict.FLAKY) if said else None


def flavour_findings(results: list[KernelResult]) -> list[FlavourFinding]:
    """Each case of a non-generic flavour whose kernel verdict differs from the generic kernel's of the
    same architecture and package version, a split (flaky) one included, each as its kernel's runs said it
    (kernel_said). Kernels without a generic twin here
    are not compared, and neither are verdicts that say nothing of the kernel's behaviour (a failed boot is
    reported as such). A local package file (--kernel FILE.deb) is nobody's twin: its version names no build."""
    archived = [r for r in results if r.origin.suite != LOCAL]
    generic = {(r.origin.arch, r.origin.version): r for r in archived if r.origin.flavour == "generic"}
    found: list[FlavourFinding] = []
    for result in sorted(archived, key=KernelResult.order):
        twin = generic.get((result.origin.arch, result.origin.version))
        if result.origin.flavour in (None, "generic") or twin is None:
            continue
        theirs = {(c.privilege, c.name): kernel_said(c) for c in twin.reproducers}
        for case in result.reproducers:
            other, ours = theirs.get((case.privilege, case.name)), kernel_said(case)
            if other is not None and ours is not None and other != ours:
                found.append(FlavourFinding(result.kernel_id, twin.kernel_id, case.privilege, case.name, ours, other))
    return found
