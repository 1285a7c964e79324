"""The mutant score without a kernel: a fake builder and a fake boot, table-tested. Noise never kills a mutant
(a failed boot on either side, a split, evidence seen in one boot only); a base that will not boot stops it."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from sigwake.programs.catalogue import Catalogue
from sigwake.kernels.build import BuildError, BuildRequest, BuiltKernel
from sigwake.targets.options import RunOptions
from sigwake.targets.interpret import KernelOutcome
from sigwake.core.model import CUT_OFF, NEVER_RAN, BootRecord, ReproResult, Splat
from sigwake.commands.mutants import BaseBootError, Boot, score
from sigwake.core.progress import Progress
from sigwake.targets.qemu import Accel
from sigwake.core.verdicts import Verdict

D, N = Verdict.DELIVERED, Verdict.NOT_DELIVERED


def boot(*cases: ReproResult, status: str = "ok") -> KernelOutcome:
    """A boot of a kernel that started (its banner printed, its init ran), as a mutant kernel's boots are."""
    return KernelOutcome("6.12.0", BootRecord(status, None, 900, detail="" if status == "ok" else "Kernel panic",
                                              kernel_started=True), list(cases), {})


def case(verdict: Verdict, runs: dict[str, int] | None = None, **evidence: int) -> ReproResult:
    return ReproResult("setsig_siginfo_watermark", verdict, "", dict(evidence), 1.0, "root", runs or {str(verdict): 3})


BASE = boot(case(D, si_code=1))


@dataclass
class FakeBuilder:
    broken: set[str] = field(default_factory=set)
    same_code: set[str] = field(default_factory=set)  # mutants whose kernel's code is the base's

    def build(self, request: BuildRequest, progress: Progress) -> BuiltKernel:
        name = request.patches[0].stem if request.patches else "base"
        if name in self.broken:
            raise BuildError("make failed")
        code = "base" if name in self.same_code else name
        return BuiltKernel(Path(name), name, "0" * 40, Path("log"), 1.0, code=code)


@dataclass
class FakeBoot:
    """Each label's boots in order (a label's first boot, then "<label> again", "<label> second", ...)."""

    boots: dict[str, list[KernelOutcome]]
    asked: list[str] = field(default_factory=list)

    def __call__(self, built: BuiltKernel, label: str) -> KernelOutcome:
        self.asked.append(label)
        return self.boots[built.key].pop(0)


class FakeBinaries:
    def __init__(self, catalogue: Catalogue) -> None:
        self.catalogue = catalogue

    def initramfs(self, path: Path) -> Path:
        return path


def run(boots: dict[str, list[KernelOutcome]], tmp_path: Path, catalogue: Catalogue, broken: set[str] | None = None,
        same_code: set[str] | None = None):
    fake = FakeBoot(boots)
    patches = [Path(f"{name}.patch") for name in boots if name != "base"] + [Path(f"{n}.patch") for n in broken or ()]
    builder = FakeBuilder(broken or set(), same_code or set())
    results = score(builder, tmp_path, (), patches, FakeBinaries(catalogue),  # type: ignore[arg-type]
                    RunOptions(Accel("tcg", "test")), tmp_path, Progress(quiet=True), fake)
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
def test_only_a_difference_between_good_boots_in_every_repeat_kills(mutant_boots: list[KernelOutcome], verdict: str,
                                                                    tmp_path: Path, catalogue: Catalogue) -> None:
    results, _ = run({"base": [BASE], "m": mutant_boots}, tmp_path, catalogue)
    assert results["m"].verdict == verdict


def splatted(outcome: KernelOutcome, title: str) -> KernelOutcome:
    """The boot with a kernel report under its case (as the console reader attributes one)."""
    outcome.splats.append(Splat("warning", title, 1, title, privilege="root", case="setsig_siginfo_watermark"))
    return outcome


def test_a_kernel_report_kills_only_when_it_recurs_in_a_second_boot(tmp_path: Path, catalogue: Catalogue) -> None:
    once = [splatted(boot(case(D, si_code=1)), "WARNING in perf_event_wakeup"), boot(case(D, si_code=1))]
    twice = [splatted(boot(case(D, si_code=1)), "WARNING in perf_event_wakeup"),
             splatted(boot(case(D, si_code=1)), "WARNING in perf_event_wakeup")]
    other = [splatted(boot(case(D, si_code=1)), "WARNING in perf_event_wakeup"),
             splatted(boot(case(D, si_code=1)), "WARNING in send_sigio")]
    results, _ = run({"base": [BASE], "once": once, "twice": twice, "other": other}, tmp_path, catalogue)
    assert results["once"].verdict == "survived"
    assert results["twice"].verdict == "detected"
    assert "WARNING in perf_event_wakeup" in str(results["twice"].detected_by[0])
    assert results["other"].verdict == "survived"  # another report in the second boot is not this one again
    more = [splatted(boot(case(D, si_code=1)), "WARNING in perf_event_wakeup"),
            splatted(splatted(boot(case(D, si_code=1)), "WARNING in send_sigio"), "WARNING in perf_event_wakeup")]
    results, _ = run({"base": [BASE], "more": more}, tmp_path, catalogue)
    assert results["more"].verdict == "detected"  # the same report again, beside another: it recurs


def test_a_mutant_whose_kernel_code_is_the_bases_is_equivalent_unbooted(tmp_path: Path, catalogue: Catalogue) -> None:
    results, fake = run({"base": [BASE], "same": [boot(case(N))]}, tmp_path, catalogue, same_code={"same"})
    assert results["same"].verdict == "equivalent" and results["same"].same_code
    assert "same" not in fake.asked


def gone(verdict: Verdict) -> ReproResult:
    return ReproResult("owner_gone_thread", verdict, "", {"signals": 0}, 1.0, "root", {str(verdict): 3})


def died_under(name: str) -> ReproResult:
    return ReproResult(name, Verdict.BOOT_FAILED, f"{CUT_OFF}: Kernel panic - not syncing: Fatal exception", {},
                       None, "root")


def never_ran(name: str) -> ReproResult:
    return ReproResult(name, Verdict.BOOT_FAILED, f"{NEVER_RAN}: the boot ended: Kernel panic", {}, None, "root")


@pytest.mark.parametrize("mutant_boots, killed_by", [
    # died under the same case twice (a series of fresh boots, as a LAVA lab may give): that case kills it, the
    # rest compared as ever
    ([boot(case(D, si_code=1), died_under("owner_gone_thread"), status="boot-failed")] * 2, ["owner_gone_thread"]),
    # died under one case and never reached another: the one it never ran says nothing
    ([boot(died_under("owner_gone_thread"), never_ran("setsig_siginfo_watermark"), status="boot-failed")] * 2,
     ["owner_gone_thread"]),
    # died under one case, and the boots it went on in ran out before another: the missing one says nothing
    ([boot(died_under("owner_gone_thread"), status="boot-failed")] * 2, ["owner_gone_thread"]),
    # died under different cases in its two boots: no case to blame, neither killed nor survived
    ([boot(case(D, si_code=1), died_under("owner_gone_thread"), status="boot-failed"),
      boot(died_under("setsig_siginfo_watermark"), gone(N), status="boot-failed")], None),
    # died before any case, twice
    ([boot(never_ran("setsig_siginfo_watermark"), never_ran("owner_gone_thread"), status="boot-failed")] * 2, None),
])
def test_a_kernel_that_dies_under_a_case_in_both_boots_is_killed_by_that_case(
        mutant_boots: list[KernelOutcome], killed_by: list[str] | None, tmp_path: Path, catalogue: Catalogue) -> None:
    results, _ = run({"base": [boot(case(D, si_code=1), gone(N))], "m": list(mutant_boots)}, tmp_path, catalogue)
    result = results["m"]
    if killed_by is None:
        assert result.verdict == "boot failed" and "Kernel panic" in (result.boot_error or "")
        return
    assert result.verdict == "detected" and "Kernel panic" in result.died
    assert [c.case for c in result.detected_by] == killed_by


def reported_under(outcome: KernelOutcome, name: str) -> KernelOutcome:
    """The boot with a kernel report under `name`, as a crash's own Oops is attributed."""
    outcome.splats.append(Splat("oops", "general protection fault in send_sigio", 1, "Oops", privilege="root",
                                case=name))
    return outcome


def test_dying_twice_under_a_case_kills_whatever_report_it_printed(tmp_path: Path, catalogue: Catalogue) -> None:
    # the crash's own report makes the case's change a splat (which alone needs a second boot): the deaths decide
    crashed = [reported_under(boot(died_under("owner_gone_thread"), status="boot-failed"), "owner_gone_thread")
               for _ in range(2)]
    results, fake = run({"base": [boot(case(D, si_code=1), gone(N))], "m": crashed}, tmp_path, catalogue)
    assert results["m"].verdict == "detected" and fake.asked == ["unpatched", "m", "m again"]
    assert [c.case for c in results["m"].detected_by] == ["owner_gone_thread"]


def test_a_case_the_unpatched_kernel_died_under_kills_no_mutant(tmp_path: Path, catalogue: Catalogue) -> None:
    base = [boot(died_under("owner_gone_thread"), status="boot-failed"), boot(case(D, si_code=1), gone(N))]
    mutant = [boot(died_under("owner_gone_thread"), status="boot-failed")] * 2
    results, _ = run({"base": base, "m": mutant}, tmp_path, catalogue)
    assert results["m"].verdict == "boot failed"


def test_a_second_boot_that_never_reaches_the_case_leaves_the_mutant_undecided(tmp_path: Path,
                                                                              catalogue: Catalogue) -> None:
    # evidence changed in the first boot; the boots meant to see it again died before that case ran
    never = boot(never_ran("setsig_siginfo_watermark"), status="boot-failed")
    results, fake = run({"base": [BASE], "m": [boot(case(D, si_code=6)), never, never]}, tmp_path, catalogue)
    assert fake.asked == ["unpatched", "m", "m second", "m second again"]
    assert results["m"].verdict == "boot failed" and "undecided" in (results["m"].boot_error or "")


def test_a_base_that_fails_once_is_booted_again_and_twice_stops_the_score(tmp_path: Path, catalogue: Catalogue) -> None:
    results, fake = run({"base": [boot(status="boot-failed"), BASE], "m": [boot(case(N))]}, tmp_path, catalogue, {"b"})
    assert fake.asked[:2] == ["unpatched", "unpatched again"]
    assert results["m"].verdict == "detected" and results["b"].verdict == "build failed"
    with pytest.raises(BaseBootError, match="did not boot cleanly twice"):
        run({"base": [boot(status="boot-failed"), boot(status="boot-failed")], "m": [boot(case(N))]}, tmp_path, catalogue)


def test_a_case_that_errs_on_the_unpatched_kernel_stops_the_score(tmp_path: Path, catalogue: Catalogue) -> None:
    erring = ReproResult("sigio_permission_user_owner", Verdict.ERROR, "a witness never started waiting", {}, 1.0,
                         "root", {"error": 3})
    with pytest.raises(BaseBootError, match="sigio_permission_user_owner \\[root\\]: a witness never started"):
        run({"base": [boot(case(D, si_code=1), erring)], "m": [boot(case(N))]}, tmp_path, catalogue)


def test_the_generated_score_keeps_each_record_and_renders_per_function_and_operator(tmp_path: Path) -> None:
    from sigwake.commands.mutant_score import MutantRecord, ScoreStore, judged, render, write_score
    killed = MutantRecord("rb-wakeup-statement-22-a", "kernel/events/ring_buffer.c", "perf_output_wakeup", "statement",
                          "killed", ["watermark_poll [root]: regresses: delivered -> no-wakeup"], "", "--- a\n+++ b\n")
    survivor = MutantRecord("rb-wakeup-bound-24-b", "kernel/events/ring_buffer.c", "perf_output_wakeup", "bound",
                            "survived", [], "", "-\tpending_wakeup = 1;\n+\tpending_wakeup = 2;\n")
    lonely = MutantRecord("fcntl-sigio_perm-relational-9-c", "fs/fcntl.c", "sigio_perm", "relational", "survived")
    store = ScoreStore(tmp_path / "records", MutantRecord)
    store.put(killed)
    assert store.get(killed.name) == killed and store.get("never-judged") is None  # what a resumed score skips
    records = judged([killed, survivor, lonely], {survivor.name: "pending_wakeup is only tested for non-zero"},
                     {lonely.name: "only a second uid shows it"})
    assert records[2].verdict == "survived" and records[2].why == "only a second uid shows it"  # still counts
    text = render(records, 12.0)
    assert "**1 of 2 non-equivalent mutants killed (50.0%)**; 1 killed, 1 survived, 1 equivalent; this run 12 s" in text
    assert "| perf_output_wakeup | bound | 0 | 0 | 1 | 0 | 0 |" in text
    assert "Functions without a kill: sigio_perm" in text
    assert "## equivalent: rb-wakeup-bound-24-b\n\npending_wakeup is only tested for non-zero" in text
    written = write_score(tmp_path / "results", records, 12.0)
    assert [p.name for p in written] == ["score.json", "score.md"] and written[0].parent.name == "mutants"


def killing_every_mutant(tmp_path: Path) -> tuple[Path, dict[str, tuple[str, ...]], list[str], Boot]:
    """The test tree, its path, the labels booted (in order), and a boot in which every mutant changes case N."""
    tree = tmp_path / "tree"
    shutil.copytree(Path(__file__).parent / "data" / "mutagen", tree)
    asked: list[str] = []

    def fake_boot(built: BuiltKernel, label: str) -> KernelOutcome:
        asked.append(label)
        return BASE if label == "unpatched" else boot(case(N))
    return tree, {"path.c": ("perf_output_wakeup", "send_sigio")}, asked, fake_boot


@pytest.mark.skipif(shutil.which("spatch") is None, reason="spatch is missing: ./sigwake setup installs coccinelle")
def test_shards_judge_the_sample_between_them_and_share_one_record_each(tmp_path: Path, catalogue: Catalogue) -> None:
    from sigwake.commands.mutant_score import score_generated
    tree, path, asked, fake_boot = killing_every_mutant(tmp_path)

    def shard(k: int, n: int, rejudge: tuple[str, ...] = (), fragments: tuple[Path, ...] = (),
              only: tuple[str, ...] = ()) -> list:
        return score_generated(FakeBuilder(), tree, fragments, FakeBinaries(catalogue),  # type: ignore[arg-type]
                               RunOptions(Accel("tcg", "test")), tmp_path / f"shard-{k}", Progress(quiet=True), 1,
                               path, records=tmp_path / "records", shard=(k, n), boot=fake_boot, rejudge=rejudge,
                               only=only)

    first = shard(0, 2)
    judged_first = [label for label in asked if label != "unpatched"]
    second = shard(1, 2)
    judged_second = [label for label in asked if label != "unpatched"][len(judged_first):]
    assert judged_first and judged_second and not set(judged_first) & set(judged_second)
    assert len(first) == len(judged_first) and len(second) == len(first) + len(judged_second)
    assert all(r.verdict == "killed" for r in second)
    asked.clear()
    assert shard(0, 1) == second and asked == []  # everything judged: nothing booted again
    # judged again on a kernel with another fragment: every record booted anew and saying which kernel
    again = shard(0, 1, rejudge=("killed",), fragments=(Path("lockdep.config"),))
    assert len([a for a in asked if a != "unpatched"]) == len(second)
    assert {r.config for r in again} == {"lockdep"} and {r.config for r in second} == {""}
    asked.clear()
    assert shard(0, 1, rejudge=("survived",)) == again and asked == []  # none survived: nothing judged
    named = again[0].name
    shard(0, 1, only=(named,))  # a named mutant is judged again, and only it
    assert [a for a in asked if a != "unpatched"] == [named]


@pytest.mark.skipif(shutil.which("spatch") is None, reason="spatch is missing: ./sigwake setup installs coccinelle")
def test_judging_again_replaces_a_record_only_with_a_new_one_and_boots_with_the_config_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, catalogue: Catalogue) -> None:
    import sigwake.commands.mutants
    from sigwake.commands.mutant_score import MutantRecord, ScoreStore, score_generated
    tree = tmp_path / "tree"
    shutil.copytree(Path(__file__).parent / "data" / "mutagen", tree)
    config = RunOptions(Accel("tcg", "test"), repeat=2)
    booted_with: list[RunOptions] = []

    def boot_built(built, initrd, binaries, run_options, log, label, progress):  # type: ignore[no-untyped-def]
        booted_with.append(run_options)
        if label == "unpatched":
            return BASE
        if interrupted:
            raise KeyboardInterrupt
        return boot(case(N))

    monkeypatch.setattr(sigwake.commands.mutants, "boot_built", boot_built)

    def run(rejudge: tuple[str, ...] = ()) -> list:
        return score_generated(FakeBuilder(), tree, (Path("lockdep.config"),), FakeBinaries(catalogue),  # type: ignore[arg-type]
                               config, tmp_path / "work", Progress(quiet=True), 1,
                               {"path.c": ("perf_output_wakeup",)}, operators=("statement",), rejudge=rejudge)

    interrupted = False
    first = run()
    # the config given, without fresh boots: the case a kernel died under twice decides, the cases after it say
    # nothing (a kernel hanging under every case would be booted once per case, in each of its two boots)
    assert first and all(r.verdict == "killed" for r in first)
    assert set(booted_with) == {replace(config, fresh_boots=False)}
    interrupted = True
    with pytest.raises(KeyboardInterrupt):
        run(rejudge=("killed",))
    store = ScoreStore(tmp_path / "work" / "records", MutantRecord)
    assert [store.get(r.name) for r in first] == first  # nothing lost to the interruption


@pytest.mark.skipif(shutil.which("spatch") is None, reason="spatch is missing: ./sigwake setup installs coccinelle")
def test_a_function_whose_sample_gave_no_verdict_is_sampled_further_until_one_is_killed_or_survives(
        tmp_path: Path, catalogue: Catalogue) -> None:
    from sigwake.commands.mutagen import mutants_of, sample
    from sigwake.commands.mutant_score import render, score_generated
    tree = tmp_path / "tree"
    shutil.copytree(Path(__file__).parent / "data" / "mutagen", tree)
    path = {"path.c": ("perf_output_wakeup", "send_sigio")}
    sampled = {m.name for m, _ in sample([(m, Path(m.name)) for m in mutants_of(tree, "path.c", path["path.c"])], 1)}
    asked: list[str] = []
    beyond: list[str] = []  # send_sigio's mutants beyond the sample, in the order first booted
    # its sampled mutants crash; beyond them, the first crashes, the second changes nothing, the rest are killed
    outcomes = [boot(status="boot-failed"), BASE]

    def fake_boot(built: BuiltKernel, label: str) -> KernelOutcome:
        asked.append(label)
        name = label.split()[0]
        if label == "unpatched" or "-send_sigio-" not in name:
            return BASE if label == "unpatched" else boot(case(N))
        if name in sampled:
            return boot(status="boot-failed")
        if name not in beyond:
            beyond.append(name)
        index = beyond.index(name)
        return outcomes[index] if index < len(outcomes) else boot(case(N))

    def run(deepen: int, equivalent: dict[str, str] | None = None) -> list:
        return score_generated(FakeBuilder(), tree, (), FakeBinaries(catalogue),  # type: ignore[arg-type]
                               RunOptions(Accel("tcg", "test")), tmp_path / "work", Progress(quiet=True), 1, path,
                               boot=fake_boot, explained=equivalent, deepen=deepen)

    first = run(0)
    assert {r.verdict for r in first if r.function == "send_sigio"} == {"boot-failed"}
    assert not any(r.further for r in first)
    deeper = run(20)
    extra = [r for r in deeper if r.further]
    assert {r.function for r in extra} == {"send_sigio"}  # the other function had its verdict
    assert [r.verdict for r in extra] == ["boot-failed", "survived"]  # a survivor is a verdict too: it stops there
    assert "send_sigio +2" in render(deeper)
    asked.clear()
    assert run(20) == deeper and asked == []  # the same choice again, nothing judged twice
    # once that survivor is explained as equivalent, it is no verdict: the next one is taken, and killed
    again = run(20, {extra[-1].name: "cannot be told"})
    assert [r.verdict for r in again if r.further] == ["boot-failed", "survived", "killed"]
    assert run(1) == [r for r in again if not r.further] + extra[:1]  # at most `deepen` rounds


def test_a_sampled_score_states_its_population_and_a_95_percent_interval(tmp_path: Path) -> None:
    from sigwake.commands.mutant_score import MutantRecord, Population, render, wilson, write_score
    from sigwake.core import schema
    import json
    low, high = wilson(84, 92)
    assert 0.835 < low < 0.845 and 0.955 < high < 0.965  # the Wilson interval of 84/92
    records = [MutantRecord(f"m{i}", "fs/fcntl.c" if i % 2 else "kernel/events/core.c", "f", "statement",
                            "killed" if i < 9 else "survived") for i in range(10)]
    population = Population({"kernel/events/core.c": 335, "fs/fcntl.c": 197}, 10,
                            "a uniformly random sample of 10, stratified by function (each its share), seed 7", 7)
    text = render(records, None, population)
    assert "**9 of 10 non-equivalent mutants killed (90.0%; 95% interval 59.6-98.2%)**" in text
    partial = render(records[:9], None, population)  # a chosen mutant without its record: no interval
    assert "**9 of 9 non-equivalent mutants killed (100.0%)**" in partial
    assert "Population: the 532 mutants the path generates (kernel/events/core.c 335, fs/fcntl.c 197)" in text
    assert "| fs/fcntl.c | 4 of 5 (80.0%; 95% interval" in text
    json_path, _ = write_score(tmp_path, records, None, population)
    schema.check("mutant-score", json.loads(json_path.read_text()))



@pytest.mark.skipif(shutil.which("spatch") is None, reason="spatch is missing: ./sigwake setup installs coccinelle")
def test_a_sample_is_judged_in_its_seeds_random_order_and_each_record_names_the_commit_that_judged_it(
        tmp_path: Path, catalogue: Catalogue) -> None:
    # An interrupted score has then judged a random part of the sample, not its first files.
    import random
    from sigwake.commands.mutagen import generate
    from sigwake.commands.mutant_score import choose, score_generated
    tree, path, asked, fake_boot = killing_every_mutant(tmp_path)

    records = score_generated(FakeBuilder(), tree, (), FakeBinaries(catalogue),  # type: ignore[arg-type]
                              RunOptions(Accel("tcg", "test")), tmp_path / "work", Progress(quiet=True), 1, path,
                              boot=fake_boot, sample_size=4, seed=5, judged_at="0123456789ab")
    chosen, _ = choose(generate(tree, tmp_path / "again", path), 1, 4, 5)
    drawn = [m.name for m, _ in chosen]
    random.Random(5).shuffle(drawn)
    assert len(drawn) == 4 and [a for a in asked if a != "unpatched"] == drawn
    assert {r.judged_at for r in records} == {"0123456789ab"} and len(records) == 4


@pytest.mark.skipif(shutil.which("spatch") is None, reason="spatch is missing: ./sigwake setup installs coccinelle")
def test_a_limited_run_judges_the_next_of_the_samples_one_order_and_a_sample_not_yet_whole_says_so(
        tmp_path: Path, catalogue: Catalogue) -> None:
    # A session's share of a long sample: limit 0 writes the score from the records alone.
    import random
    from sigwake.commands.mutagen import generate
    from sigwake.commands.mutant_score import MutantRecord, Population, choose, render, score_generated
    tree, path, asked, fake_boot = killing_every_mutant(tmp_path)

    def run(limit: int | None, config: str = "a") -> list[str]:
        asked.clear()
        records = score_generated(FakeBuilder(), tree, (Path(f"{config}.config"),),  # type: ignore[arg-type]
                                  FakeBinaries(catalogue), RunOptions(Accel("tcg", "test")),  # type: ignore[arg-type]
                                  tmp_path / "work", Progress(quiet=True), 1, path, boot=fake_boot, sample_size=4,
                                  seed=5, limit=limit)
        return [r.name for r in records]
    assert run(0) == [] and asked == []
    two = run(2)
    judged = [a for a in asked if a != "unpatched"]
    assert len(two) == 2 and len(judged) == 2
    assert len(run(None)) == 4
    order = judged + [a for a in asked if a != "unpatched"]  # the two runs took one seeded order between them
    chosen, _ = choose(generate(tree, tmp_path / "again", path), 1, 4, 5)
    drawn = [m.name for m, _ in chosen]
    random.Random(5).shuffle(drawn)
    assert order == drawn
    # Judged on another config, a record is to be judged again: one this run leaves is not counted as judged.
    assert len(run(1, config="b")) == 1
    population = Population({"fs/fcntl.c": 197}, 4, "a sample", 5)
    records = [MutantRecord(name, "fs/fcntl.c", "f", "statement", "killed") for name in two]
    assert "not yet whole: 2 of the 4 chosen mutants have a record, so no interval" in render(records, None,
                                                                                              population)
    with pytest.raises(ValueError):
        score_generated(FakeBuilder(), tree, (), FakeBinaries(catalogue),  # type: ignore[arg-type]
                        RunOptions(Accel("tcg", "test")), tmp_path / "work", Progress(quiet=True), 1, path,
                        boot=fake_boot, limit=1)
