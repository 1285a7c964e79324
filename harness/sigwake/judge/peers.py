"""The upstream selftests beside the cases: each test of a peer program read against the case whose facts name
that program (its root-pass verdict, as the selftests run as root). They agree when the selftest passes where
the case was delivered (or measured), skips where the kernel refused the case, or fails where the kernel
failed it; anything else disagrees, and a disagreement is a finding, as is a selftest that did not finish."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.model import KernelResult, PeerResult
from ..core.verdicts import Verdict
from ..programs.catalogue import Catalogue

# What a selftest's result says when the kernel behaves as a verdict says.
PASSING = (Verdict.DELIVERED, Verdict.MEASURED)
FAILING = (Verdict.NOT_DELIVERED, Verdict.MISDELIVERED, Verdict.NO_WAKEUP, Verdict.NO_RECORD, Verdict.WRONG_COUNT)


@dataclass(frozen=True)
class PeerComparison:
    peer: PeerResult
    case: str | None  # the case its program is compared with; None: no case is
    verdict: Verdict | None  # that case's root verdict (None: it has none)
    agrees: bool | None  # None: nothing to compare (no case, or a verdict that says nothing of the kernel)

    @property
    def word(self) -> str:
        """How the reports say it."""
        return "agree" if self.agrees else "disagree" if self.agrees is False else "–"

    @property
    def against(self) -> str:
        """The case it is held to, with that case's verdict, as the reports say it."""
        return f"{self.case}: {self.verdict}" if self.case else "none compared"

    @property
    def finding(self) -> str | None:
        """Why this is a finding, or None."""
        if self.peer.result == "error":
            return f"upstream {self.peer.program} did not finish: {self.peer.detail}"
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


def compare(kernel: KernelResult, catalogue: Catalogue) -> list[PeerComparison]:
    """Every peer test of the kernel, in the order it ran, with its case and whether they agree."""
    root = {r.name: r.verdict for r in kernel.reproducers if r.privilege == "root"}
    out = []
    for peer in kernel.peers:
        case = next((c.name for c in catalogue.peers_of(peer.program)), None)
        verdict = root.get(case) if case is not None else None
        agrees = agreement(peer.result, verdict) if verdict is not None and peer.result != "error" else None
        out.append(PeerComparison(peer, case, verdict, agrees))
    return out
