"""How each recorded case reads against what is known of kernels: the one place
every report and command takes it from (summary, matrix, KTAP, JUnit, KCIDB,
HTML, validate-patch, bisect, qa, flavours). In this order:

  a kernel report (splat) while the case ran   fail    "splat", even when its verdict was right
  unsupported on fewer vCPUs than it needs     skip    the machine's doing, not the kernel's (facts' cpus)
  unsupported where a kernel verdict is known  fail    "refusal": the kernel suddenly refuses the event
  unsupported, nothing else known              skip
  the boot ended while the case ran            fail    "lost"
  boot failed or timed out before the case     miss    "lost" (not when the target never ran the kernel)
  runs split, any run other than the expected  fail    "intermittent k/n" (nothing known: other than the
                                                         most common verdict)
  the reproducer's own error                   error   "error"
  differs from the expectations table          fail    "difference"
  a known failure of this kernel               xfail
  otherwise                                    pass

and, per kernel, what is found outside any case: a report during the boot, a
boot that crashed or hung, an upstream selftest that disagrees with its case or
did not finish (peers.py)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from enum import Enum

from . import expectations
from . import peers
from .emulator_faults import said
from ..programs.catalogue import Catalogue
from .flavours import flavour_findings
from ..core.model import CUT_OFF, LOST_IN_TRANSPORT, KernelResult, ReproResult, Splat
from ..core.verdicts import Verdict


class Outcome(str, Enum):
    PASS = "pass"  # the behaviour of a kernel with every known fix
    XFAIL = "xfail"  # a known failure of this kernel (e.g. before the fix), as the expectations table says
    FAIL = "fail"  # a finding: differs from what is known, refused, intermittent, or the kernel splatted
    SKIP = "skip"  # the kernel refused the setup, and nothing says it should not have
    ERROR = "error"  # the reproducer failed
    MISS = "miss"  # the harness could not run it: the boot failed or timed out first

    def __str__(self) -> str:
        return self.value


# The kinds of finding, in the order the summary counts them.
FINDING_KINDS = ("splat", "crash", "hang", "difference", "refusal", "intermittent", "peer", "flavour", "error", "lost")
BOOT_ENDINGS = ("crash", "hang")  # the kernel's findings that ended its boot: the boot's own, in every report


@dataclass(frozen=True)
class Judged:
    kernel: KernelResult
    case: ReproResult
    outcome: Outcome
    why: str  # for everything but a plain pass: the reason, the known bug, or the difference
    finding: str | None = None  # one of FINDING_KINDS when this is a finding

    @property
    def name(self) -> str:
        return self.case.name


def intermittent(case: ReproResult, wanted: Verdict | None) -> tuple[int, int, str] | None:
    """For a case whose runs split: (k, n, other) where k of n runs showed a verdict other than `wanted`
    (nothing wanted: other than the most common one); None when the runs agree."""
    if case.verdict is not Verdict.FLAKY or not case.runs:
        return None
    total = sum(case.runs.values())
    reference = str(wanted) if wanted is not None else Counter(case.runs).most_common(1)[0][0]
    others = {v: n for v, n in case.runs.items() if v != reference}
    return sum(others.values()), total, ", ".join(f"{v} x{n}" for v, n in others.items())


def split_words(case: ReproResult, correct: Verdict | None) -> str:
    """How a case's runs split: "intermittent 2/5: not-delivered x2", or "wrong in 3/3, verdicts differ: ..."
    when no run was the correct verdict."""
    k, n, others = intermittent(case, correct) or (0, 0, "")
    return f"wrong in {k}/{n}, verdicts differ: {others}" if k == n else f"intermittent {k}/{n}: {others}"


def splats_of(kernel: KernelResult, case: ReproResult) -> list[Splat]:
    return [s for s in kernel.splats if s.case == case.name and s.privilege == case.privilege]


def too_few_cpus(kernel: KernelResult, case: ReproResult, catalogue: Catalogue) -> str | None:
    """Why a case that needs more CPUs than the run gave it could not be judged; None when the run's vCPUs
    (recorded by the harness, 0 where not known) were enough, or the case counted enough itself (its `cpus`
    evidence, where it reports one: a guest that brought up fewer than it was given is the kernel's)."""
    facts = catalogue.facts(case.name)
    if facts is None or not facts.short_of_cpus(kernel.runner.cpus):
        return None
    counted = case.evidence.get("cpus")
    if isinstance(counted, int) and counted >= facts.cpus:
        return None
    return f"needs {facts.cpus} CPUs and ran on {kernel.runner.cpus} (--cpus {facts.cpus}): {case.reason}"


def judge(kernel: KernelResult, case: ReproResult, catalogue: Catalogue) -> Judged:
    verdict = case.verdict
    release, origin = expectations.facts_release(kernel.release or "", kernel.kernel_version), kernel.origin.kind
    known = expectations.expected(catalogue, case.name, release, case.privilege, origin)
    if found := splats_of(kernel, case):
        titles = "; ".join(dict.fromkeys(said(s, kernel.runner) for s in found))
        return Judged(kernel, case, Outcome.FAIL, f"kernel splat while it ran: {titles} (verdict {verdict})", "splat")
    if verdict is Verdict.ERROR and case.reason.startswith(LOST_IN_TRANSPORT):  # every run's report tore
        return Judged(kernel, case, Outcome.MISS, f"not judged: {case.reason}")
    if verdict is Verdict.UNSUPPORTED and (short := too_few_cpus(kernel, case, catalogue)) is not None:
        return Judged(kernel, case, Outcome.SKIP, short)
    if verdict in (Verdict.BOOT_FAILED, Verdict.TIMEOUT) and kernel.boot.status not in ("ok", "native"):
        if case.reason.startswith(CUT_OFF) and not kernel.boot.target_failed:  # the kernel died or hung under it
            return Judged(kernel, case, Outcome.FAIL, f"{verdict}: {case.reason}", "lost")
        return Judged(kernel, case, Outcome.MISS, f"{verdict}: {case.reason}",
                      "lost" if untested(kernel) is None else None)
    if (split := intermittent(case, known.verdict if known else None)) is not None:
        k, n, _ = split
        expected = f", expected {known.verdict} (from: {known.source})" if known else ", nothing is known of this case here"
        return Judged(kernel, case, Outcome.FAIL, f"{split_words(case, known.verdict if known else None)} in {k} of "
                                                  f"{n} runs{expected}", "intermittent")
    return Judged(kernel, case, *verdict_judged(catalogue, case.name, case.privilege, release, origin, verdict,
                                                case.reason))


def verdict_judged(catalogue: Catalogue, name: str, privilege: str, release: str, origin: str, verdict: Verdict,
                   reason: str = "") -> tuple[Outcome, str, str | None]:
    """One verdict of a case against what is known of a kernel (its release and origin): the outcome, why,
    and the finding. judge() takes it from here once the boot, splats and split runs are ruled out; a LAVA
    job takes it for each verdict a run may give (lava_results.py)."""
    known = expectations.expected(catalogue, name, release, privilege, origin)
    if verdict is Verdict.UNSUPPORTED:
        if known is not None and known.verdict is not Verdict.UNSUPPORTED:
            return Outcome.FAIL, (f"refusal: unsupported ({reason}), where {known.verdict} is known "
                                  f"(from: {known.source})"), "refusal"
        return Outcome.SKIP, reason, None
    if not verdict.is_kernel_verdict:
        return Outcome.ERROR, f"{verdict}: {reason}", "error"
    if (mismatch := expectations.check(catalogue, "", release, name, verdict, {}, privilege, origin)) is not None:
        return (Outcome.FAIL, f"{mismatch.kind}: measured {verdict}, expected {mismatch.expected} "
                              f"(from: {mismatch.source})", "difference")
    correct = expectations.correct(catalogue, name, privilege, origin)
    if known is not None and correct is not None and verdict is not correct:
        return Outcome.XFAIL, f"{verdict}, as known of this kernel: {known.source}", None
    if known is None and not verdict.is_ok:
        return Outcome.FAIL, f"{verdict} ({reason}); nothing is known of this case here", "difference"
    return Outcome.PASS, "", None


def judged_cases(kernel: KernelResult, catalogue: Catalogue) -> dict[str, list[Judged]]:
    """Per privilege pass, in the order recorded, each case judged."""
    passes: dict[str, list[Judged]] = {}
    for case in kernel.reproducers:
        passes.setdefault(case.privilege, []).append(judge(kernel, case, catalogue))
    return passes


@dataclass(frozen=True)
class Finding:
    """Something a kernel did that a gate must see: a judged case, or the kernel's own (a splat outside every
    case, a boot that crashed or hung)."""

    kernel_id: str
    kind: str  # one of FINDING_KINDS
    text: str

    def __str__(self) -> str:
        return f"{self.kernel_id}: {self.kind}: {self.text}"


def untested(kernel: KernelResult) -> str | None:
    """Why the kernel could not be tested at all, when that is the target's doing rather than the kernel's:
    nothing started (QEMU refused the image, a lab never ran the job): no banner, no kernel report, no init; or
    the target ended its boots (QEMU killed or stopped from outside: boot.target_failed). None when the kernel
    was tested, or when it started and crashed or hung: that is the kernel's, a finding."""
    boot = kernel.boot
    if boot.target_failed:  # QEMU killed or stopped from outside: whatever the kernel had done by then
        return f"{boot.status}: {boot.detail}"
    if boot.status not in ("boot-failed", "timeout") or kernel.splats or boot.kernel_started or \
            boot.init_uptime_ms is not None:
        return None
    return f"{boot.status}: {boot.detail}"


def kernel_findings(kernel: KernelResult) -> list[Finding]:
    """What is found of the kernel itself, beside its cases."""
    cases = {(case.name, case.privilege) for case in kernel.reproducers}  # a report under none of them is no case's
    fatal = next((s for s in kernel.splats if s.fatal), None)
    boot = kernel.boot
    ended_in = fatal if boot.status == "boot-failed" and untested(kernel) is None else None  # the crash finding's
    found = [Finding(kernel.kernel_id, "splat", f"{said(s, kernel.runner)} ({s.where()})") for s in kernel.splats
             if (s.case, s.privilege) not in cases and (s.case is None or s is not ended_in)]
    if untested(kernel) is not None:
        return found
    before_init = boot.status != "ok" and boot.init_uptime_ms is None
    if boot.status == "boot-failed" and before_init:
        what = f"{said(fatal, kernel.runner)} ({fatal.where()})" if fatal else f"no kernel report: {boot.detail}"
        found.append(Finding(kernel.kernel_id, "crash", f"boot crash: the kernel started and died before init: {what}"))
    elif boot.status == "boot-failed" and fatal is not None:
        ended = f"the boot ended in {said(fatal, kernel.runner)} ({fatal.where()})"
        found.append(Finding(kernel.kernel_id, "crash", ended))
    elif boot.status == "boot-failed":
        found.append(Finding(kernel.kernel_id, "crash", f"the boot ended with no kernel report: {boot.detail}"))
    elif boot.status == "timeout":
        found.append(Finding(kernel.kernel_id, "hang", ("boot hang: the kernel started and hung before init: "
                                                        if before_init else "") + boot.detail))
    return found


def unjudged(kernel: KernelResult, catalogue: Catalogue) -> list[str]:
    """Each case of a kernel that was tested that still has no judgement and no finding (every run's report
    tore on the way): a gate counts each as not tested. A kernel not tested at all is one entry (untested)."""
    if untested(kernel) is not None:
        return []
    return [f"{kernel.kernel_id}: [{j.case.privilege}] {j.name}: {j.why}" for cases in
            judged_cases(kernel, catalogue).values() for j in cases if j.outcome is Outcome.MISS and j.finding is None]


def findings(kernels: list[KernelResult], catalogue: Catalogue) -> list[Finding]:
    """Every finding of every kernel, kernels in version order, the kernel's own first; then every flavour
    that judges a case otherwise than the generic kernel of its version."""
    out: list[Finding] = []
    for kernel in sorted(kernels, key=KernelResult.order):
        out += kernel_findings(kernel)
        out += [Finding(kernel.kernel_id, j.finding, f"[{j.case.privilege}] {j.name}: {j.why}")
                for cases in judged_cases(kernel, catalogue).values() for j in cases if j.finding is not None]
        out += peer_findings(kernel, catalogue)
    return out + flavour_differences(kernels)


def peer_findings(kernel: KernelResult, catalogue: Catalogue) -> list[Finding]:
    """Each upstream selftest test that disagrees with its case, or did not finish."""
    return [Finding(kernel.kernel_id, "peer", text) for c in peers.compare(kernel, catalogue)
            if (text := c.finding) is not None]


def flavour_differences(kernels: list[KernelResult]) -> list[Finding]:
    """Each case a flavour judges otherwise than the generic kernel of its version."""
    return [Finding(f.kernel_id, "flavour", str(f)) for f in flavour_findings(kernels)]


def whole_run(kernel: KernelResult) -> str:
    """The test that stands for the kernel's whole run in every report, failed by a crash or hang and an error
    when the kernel was not tested: its "boot", or for the host's own kernel, which nothing booted, its "run"."""
    return "run" if kernel.runner.mode == "native" else "boot"


def beside_cases(kernel: KernelResult, catalogue: Catalogue, flavours: list[Finding]) -> list[Finding]:
    """What is found of a kernel beside its cases' own findings, as every report shows it on the kernel: its
    own (the boot's end, the reports no case holds), its selftests', and where its flavour judges a case
    otherwise than the generic kernel (`flavours`: flavour_differences of every kernel shown)."""
    return (kernel_findings(kernel) + peer_findings(kernel, catalogue)
            + [f for f in flavours if f.kernel_id == kernel.kernel_id])


def shown(found: list[Finding], kernels: list[KernelResult]) -> list[str]:
    """The findings as a person reads them: each on its line, a kernel's lost cases on one (a crash loses many)."""
    lines = [str(f) for f in found if f.kind != "lost"]
    for kernel in sorted(kernels, key=KernelResult.order):
        lost = [f.text.split(":")[0] for f in found if f.kind == "lost" and f.kernel_id == kernel.kernel_id]
        if lost:
            lines.append(f"{kernel.kernel_id}: lost: {len(lost)} cases never reached a verdict "
                         f"({kernel.boot.status}: {kernel.boot.detail}): {', '.join(lost)}")
    return lines
