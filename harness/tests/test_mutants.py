"""The mutant score without a kernel: a fake builder and a fake boot, table-tested. Noise never kills a mutant
(a failed boot on either side, a split, evidence seen in one boot only); a base that will not boot stops it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from sigwake.build import BuildError, BuildRequest, BuiltKernel
from sigwake.guest import GuestConfig, GuestOutcome
from sigwake.model import BootRecord, ReproResult
from sigwake.mutants import BaseBootError, score
from sigwake.progress import Progress
from sigwake.qemu import Accel
from sigwake.verdicts import Verdict

D, N = Verdict.DELIVERED, Verdict.NOT_DELIVERED


def boot(*cases: ReproResult, status: str = "ok") -> GuestOutcome:
    return GuestOutcome("6.12.0", BootRecord(status, detail="" if status == "ok" else "Kernel panic"), list(cases), {})


def case(verdict: Verdict, runs: dict[str, int] | None = None, **evidence: int) -> ReproResult:
    return ReproResult("setsig_siginfo_watermark", verdict, "", dict(evidence), 1.0, "root", runs or {str(verdict): 3})


BASE = boot(case(D, si_code=1))


@dataclass
class FakeBuilder:
    broken: set[str] = field(default_factory=set)

    def build(self, request: BuildRequest, progress: Progress) -> BuiltKernel:
        name = request.patches[0].stem if request.patches else "base"
        if name in self.broken:
            raise BuildError("make failed")
        return BuiltKernel(Path(name), name, "0" * 40, Path("log"), 1.0)


@dataclass
class FakeBoot:
    """Each label's boots in order (a label's first boot, then "<label> again", "<label> second", ...)."""

    boots: dict[str, list[GuestOutcome]]
    asked: list[str] = field(default_factory=list)

    def __call__(self, built: BuiltKernel, label: str) -> GuestOutcome:
        self.asked.append(label)
        return self.boots[built.key].pop(0)


class FakeBinaries:
    def initramfs(self, path: Path) -> Path:
        return path


def run(boots: dict[str, list[GuestOutcome]], tmp_path: Path, broken: set[str] | None = None):
    fake = FakeBoot(boots)
    patches = [Path(f"{name}.patch") for name in boots if name != "base"] + [Path(f"{n}.patch") for n in broken or ()]
    results = score(FakeBuilder(broken or set()), tmp_path, (), patches, FakeBinaries(),  # type: ignore[arg-type]
                    GuestConfig(Accel("tcg", "test")), tmp_path, Progress(quiet=True), fake)
    return {r.name: r for r in results}, fake


@pytest.mark.parametrize("mutant_boots, verdict", [
    ([boot(case(N))], "detected"),  # the signal gone in every run
    ([boot(case(Verdict.FLAKY, {"delivered": 2, "not-delivered": 1}))], "survived"),  # a split is no kill
    # evidence changed, and again in a second boot of the mutant: killed
    ([boot(case(D, si_code=6)), boot(case(D, si_code=6))], "detected"),
    # evidence changed in one boot only: noise
    ([boot(case(D, si_code=6)), boot(case(D, si_code=1))], "survived"),
    # a failed boot is booted again; the good second boot judges it
    ([boot(status="boot-failed"), boot(case(N))], "detected"),
    # a mutant kernel that never boots is neither killed nor survived
    ([boot(status="boot-failed"), boot(status="timeout")], "boot failed"),
])
def test_only_a_difference_between_good_boots_in_every_repeat_kills(mutant_boots: list[GuestOutcome], verdict: str,
                                                                    tmp_path: Path) -> None:
    results, _ = run({"base": [BASE], "m": mutant_boots}, tmp_path)
    assert results["m"].verdict == verdict


def test_a_base_that_fails_once_is_booted_again_and_twice_stops_the_score(tmp_path: Path) -> None:
    results, fake = run({"base": [boot(status="boot-failed"), BASE], "m": [boot(case(N))]}, tmp_path, {"b"})
    assert fake.asked[:2] == ["unpatched", "unpatched again"]
    assert results["m"].verdict == "detected" and results["b"].verdict == "build failed"
    with pytest.raises(BaseBootError, match="did not boot cleanly twice"):
        run({"base": [boot(status="boot-failed"), boot(status="boot-failed")], "m": [boot(case(N))]}, tmp_path)
