"""The upstream selftests beside the cases: each test of a peer program read against the case whose facts name
that program (its root-pass verdict, as the selftests run as root). They agree when the selftest passes where
the case was delivered (or measured), skips where the kernel refused the case, or fails where the kernel
failed it; anything else disagrees, and a disagreement is a finding, as is a selftest that did not finish.
A selftest that needs what the machine lacks (programs/peers.NEEDS, as the guest probed it) is not comparable
there, and no finding; one whose disagreement is known of kernels without a feature (KNOWN) is said, as a
case's known failure is."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.model import KernelResult, PeerResult
from ..core.verdicts import Verdict
from ..programs.catalogue import Catalogue
from ..programs.peers import NEEDS

# A selftest's result that is known where its case's kernel lacks the feature: (program, the case's verdict,
# the selftest's result) -> why. sigtrap_threads asserts that its event opens, so on a kernel without
# attr.sigtrap (before 97ba62b27867, v5.13) it fails where the case is refused (seen on bullseye's 5.10).
KNOWN = {("sigtrap_threads", Verdict.UNSUPPORTED, "fail"):
         "sigtrap_threads fails its setup on a kernel without attr.sigtrap (97ba62b27867, v5.13), where the case "
         "is refused"}

# What a selftest's result says when the kernel behaves as a verdict says.
PASSING = (Verdict.DELIVERED, Verdict.MEASURED)
FAILING = (Verdict.NOT_DELIVERED, Verdict.MISDELIVERED, Verdict.NO_WAKEUP, Verdict.NO_RECORD, Verdict.WRONG_COUNT)


@dataclass(frozen=True)
class PeerComparison:
    peer: PeerResult
    case: str | None  # the case its program is compared with; None: no case is
    verdict: Verdict | None  # that case's root verdict (None: it has none)
    agrees: bool | None  # None: nothing to compare (no case, or a verdict that says nothing of the kernel)
    lacking: str = ""  # what this machine lacks that the selftest needs: not comparable here
    known: str = ""  # why this disagreement is known of kernels like this one

    @property
    def word(self) -> str:
        """How the reports say it."""
        if self.lacking:
            return f"not comparable here ({self.lacking})"
        if self.known:
            return f"known ({self.known})"
        return "agree" if self.agrees else "disagree" if self.agrees is False else "–"

    @property
    def against(self) -> str:
        """The case it is held to, with that case's verdict, as the reports say it."""
        return f"{self.case}: {self.verdict}" if self.case else "none compared"

    @property
    def finding(self) -> str | None:
        """Why this is a finding, or None."""
        if self.peer.result == "error":  # a machine without a feature fails or skips a selftest; it does not hang it
            return f"upstream {self.peer.program} did not finish: {self.peer.detail}"
        if self.lacking or self.known:
            return None
        if self.agrees is False:
            detail = f" ({self.peer.detail})" if self.peer.detail else ""
            return f"upstream {self.peer.test} says {self.peer.result}{detail} where {self.case} is {self.verdict}"
        return None


def agreement(result: str, verdict: Verdict) -> bool | None:
    if verdict in PASSING:
        return result in ("pass", "xfail")
    if verdict is Verdict.UNSUPPORTED:
        return result == "skip"
    if verdict in FAILING:
        return result == "fail"
    return None  # flaky, an error, a boot that ended: the case has no kernel verdict to hold the selftest to


def lacking(kernel: KernelResult, program: str) -> str:
    """What the machine the kernel ran on lacks of what `program` needs ("" when it has all, or was not probed).
    The probe runs on the kernel under test, so a lack is the machine's only where it must be: on the host (the
    machine is this one's hypervisor or hardware), in a KVM guest (its debug registers are the host CPU's,
    through a hypervisor that may not pass them on: this one's does not), or where the kernel refused the event
    outright (it knows no such hardware: TCG's missing PMU). A breakpoint that opens under TCG, which emulates
    the debug registers, and counts wrong is the kernel's."""
    on_hardware = kernel.runner.mode == "native" or kernel.runner.accel == "kvm"

    def machines(value: str) -> bool:
        return value.startswith("no") and (on_hardware or value.startswith("no: perf_event_open"))
    missing = [f"{need}: {kernel.machine[need].removeprefix('no: ')}" for need in NEEDS.get(program, ())
               if machines(kernel.machine.get(need, "yes"))]
    return "; ".join(missing)


def compare(kernel: KernelResult, catalogue: Catalogue) -> list[PeerComparison]:
    """Every peer test of the kernel, in the order it ran, with its case and whether they agree."""
    root = {r.name: r.verdict for r in kernel.reproducers if r.privilege == "root"}
    out = []
    for peer in kernel.peers:
        case = next((c.name for c in catalogue.peers_of(peer.program)), None)
        verdict = root.get(case) if case is not None else None
        agrees = agreement(peer.result, verdict) if verdict is not None and peer.result != "error" else None
        known = KNOWN.get((peer.program, verdict, peer.result), "") if agrees is False else ""
        out.append(PeerComparison(peer, case, verdict, agrees, lacking(kernel, peer.program), known))
    return out
