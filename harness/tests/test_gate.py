"""The one judgement, as a table of command x kind: each kind of thing a kernel can do (or a machine can fail
to do) given to run, validate-patch, bisect and qa through their own judging code (judgement.py, change.py,
validate.pair, bisect.probed_of and the driver, qa.find_boundary), and the exit code each must give. The
kernels are fakes of what the targets return (KernelOutcome); the real kernels are in test_kernel_source.py."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sigwake.commands import qa
from sigwake.commands.bisect import BisectError, BisectReport, ListSearch, Probe, Probed, bisect, probed_of
from sigwake.commands.cli import REPO, summary_exit
from sigwake.commands.orchestrator import RunConfig, RunSummary
from sigwake.commands.validate import boot_problems, new_reports, pair
from sigwake.kernels.build import BuildError
from sigwake.core.exit_codes import COULD_NOT_TEST, FINDING, NO_FINDING
from sigwake.core.model import CUT_OFF, LOST_IN_TRANSPORT, NEVER_RAN, BootRecord, KernelResult, Origin, PeerResult, QaLine, QaStep, \
    ReproResult, Runner, Splat
from sigwake.core.progress import Progress
from sigwake.core.verdicts import Verdict
from sigwake.judge import gate
from sigwake.judge.peers import compare
from sigwake.programs.catalogue import Catalogue
from sigwake.targets.interpret import KernelOutcome

CASE = "watermark_sigio"  # delivered on every kernel with the fix: these kernels are 6.12
RELEASE = "6.12.118+deb13-amd64"
D, N = Verdict.DELIVERED, Verdict.NOT_DELIVERED
OK = BootRecord("ok", 10.0, 900, kernel_started=True)
WARN = "WARNING in perf_event_wakeup"


def ran(verdict: Verdict, reason: str = "", runs: dict[str, int] | None = None) -> ReproResult:
    return ReproResult(CASE, verdict, reason, {}, 1.0, "root", runs or {str(verdict): 5})


def kernel(case: ReproResult, boot: BootRecord = OK, splats: tuple[Splat, ...] = (),
           peers: tuple[PeerResult, ...] = ()) -> KernelOutcome:
    return KernelOutcome(RELEASE, boot, [case], {}, splats=list(splats), peers=list(peers))


def splat(case: str | None, fatal: bool = False) -> Splat:
    title = "kernel panic: Fatal exception" if fatal else WARN
    return Splat("panic" if fatal else "warning", title, 40, "...", fatal, privilege="root" if case else None,
                 case=case)


GOOD = kernel(ran(D))
# Each kind as the kernel under judgement shows it: the run's kernel, the patched kernel, a bisection's step.
KINDS: dict[str, KernelOutcome] = {
    "nothing": GOOD,
    "regression": kernel(ran(N)),
    "change": kernel(ran(Verdict.NO_WAKEUP)),
    "lost": kernel(ran(Verdict.BOOT_FAILED, f"{CUT_OFF}: the console ended"),
                   BootRecord("boot-failed", 9.0, 900, "the console ended", kernel_started=True)),
    "splat in a case": kernel(ran(D), splats=(splat(CASE),)),
    "splat outside every case": kernel(ran(D), splats=(splat(None),)),
    "crash": kernel(ran(Verdict.BOOT_FAILED, f"{CUT_OFF}: Kernel panic"),
                    BootRecord("boot-failed", 9.0, 900, "Kernel panic - not syncing", kernel_started=True),
                    (splat(CASE, fatal=True),)),
    "hang": kernel(ran(Verdict.TIMEOUT, f"{CUT_OFF}: silent"),
                   BootRecord("timeout", 90.0, 900, "the console was silent for 60 s", kernel_started=True)),
    "silent boot death": kernel(ran(Verdict.BOOT_FAILED, f"{NEVER_RAN}: the boot ended"),
                                BootRecord("boot-failed", 3.0, None, "QEMU exited with 0 before the init reported",
                                           kernel_started=True)),
    "split": kernel(ran(Verdict.FLAKY, "runs disagree", {"delivered": 3, "not-delivered": 2})),
    "refusal": kernel(ran(Verdict.UNSUPPORTED, "perf_event_open: EACCES")),
    "unjudgeable": kernel(ran(Verdict.ERROR, "the program reported no case and ended: killed by signal 11")),
    "nothing started": kernel(ran(Verdict.BOOT_FAILED, f"{NEVER_RAN}: the boot ended"),
                              BootRecord("boot-failed", 0.1, None, "QEMU exited with 1 before the init reported")),
    "peer disagreement": kernel(ran(D), peers=(PeerResult("watermark_signal", "global.watermark_signal", "fail"),)),
}


def as_result(outcome: KernelOutcome, mode: str = "qemu") -> KernelResult:
    """`mode`: the runner's, or "qemu/kvm" for a KVM guest."""
    runner = Runner("qemu", 5, accel="kvm") if mode == "qemu/kvm" else Runner(mode, 5, accel="tcg" if mode == "qemu" else "")
    return outcome.as_result(RELEASE, runner, Origin("debian", f"linux-image-{RELEASE}", "1", "trixie"))


def run_exit(outcome: KernelOutcome, catalogue: Catalogue) -> int:
    return summary_exit(RunSummary([as_result(outcome)]), catalogue).exit_code


def validate_exit(base: KernelOutcome, patched: KernelOutcome, catalogue: Catalogue) -> int:
    return gate.of_changes(pair(base, patched, catalogue), new_reports(base, patched),
                           boot_problems(base, patched)).exit_code


def bisection(step: KernelOutcome, catalogue: Catalogue, at: int = 3) -> BisectReport:
    """c0 .. c6, not-delivered up to c4 and delivered from c5 (on 6.1 kernels, where that is known), with the
    kernel at `at` the kind under judgement: by default c3, the first judged, and one the answer (c5) does not
    hang on, so a step marked skip leaves it certain."""
    def on_6_1(outcome: KernelOutcome) -> KernelOutcome:
        return dataclasses.replace(outcome, release="6.1.0-57-amd64")

    class Tester:
        def judge(self, candidate: str) -> Probed:
            number = int(candidate[1:])
            given = step if number == at else kernel(ran(N)) if number < 5 else GOOD
            return probed_of(on_6_1(given), candidate, CASE, 5, catalogue)

    return bisect(ListSearch([f"c{i}" for i in range(7)]), Tester(), "c0", "c6")


def bisect_exit(step: KernelOutcome, catalogue: Catalogue) -> int:
    report = bisection(step, catalogue)
    return gate.of_steps(CASE, report.first_changed, report.steps).exit_code


def qa_exit(step: KernelOutcome, catalogue: Catalogue, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> int:
    """qa: the run's kernels all well; the kind is a package its bisection met."""
    monkeypatch.setattr(qa, "bisect_debian", lambda *args, **kwargs: bisection(step, catalogue))
    config = qa.QaConfig(RunConfig(REPO, REPO / "build", tmp_path, tmp_path / "results", ()))
    line = QaLine("amd64", "generic")
    _, found = qa.find_boundary(config, line, QaStep("p", "1", "bookworm", "not-delivered"),
                                QaStep("p", "2", "trixie", "delivered"), None, Progress(quiet=True))  # type: ignore[arg-type]
    return summary_exit(RunSummary([as_result(GOOD)]), catalogue, found).exit_code


F, U, O, NA = FINDING, COULD_NOT_TEST, NO_FINDING, None
# kind: run, validate-patch (patched kernel; the base is GOOD), bisect (the step), qa (a package its bisection met;
# qa's own run is judged as run's is, so its column holds what its bisections add)
TABLE = {
    "nothing": (O, O, O, O),
    "regression": (F, F, O, O),  # a bisection's step with the old verdict is its answer, not a finding
    "change": (F, F, F, F),  # a third verdict in a bisection: the behaviour did not change in one step
    "lost": (F, F, F, F),
    "splat in a case": (F, F, F, F),
    "splat outside every case": (F, F, F, F),
    "crash": (F, F, F, F),
    "hang": (F, F, F, F),
    "silent boot death": (F, F, F, F),
    "split": (F, F, F, F),
    "refusal": (F, F, F, F),
    "unjudgeable": (F, F, F, F),  # the reproducer's own error on the kernel under judgement
    "nothing started": (U, U, O, O),  # the target's doing: nothing judged; a step: a skip beside a certain answer
    "splat in another case": (F, F, F, F),  # the bisected case is right; the same boot's other case splatted
    "hang at power-off": (F, F, F, F),  # every case reported, then the console went silent
    "peer disagreement": (F, NA, NA, NA),  # only run compares the upstream selftests
    "target failed mid-run": (U, U, O, O),  # QEMU killed from outside after the banner: the machine's, not tested
    "every run's report torn": (U, U, O, O),  # a lab's log lost a frame of each run: the case was not judged
}
KINDS["every run's report torn"] = kernel(ran(Verdict.ERROR, f"{LOST_IN_TRANSPORT} (frames 40): it said exit 0",
                                              {"error": 3}))
KINDS["splat in another case"] = dataclasses.replace(
    GOOD, reproducers=[ran(D), dataclasses.replace(ran(D), name="watermark_poll")],
    splats=[splat("watermark_poll")])
KINDS["target failed mid-run"] = kernel(
    ran(Verdict.BOOT_FAILED, f"{CUT_OFF}: QEMU was killed by SIGKILL"),
    BootRecord("boot-failed", 9.0, 900, "QEMU was killed by SIGKILL, not by sigwake", kernel_started=True,
               target_failed="QEMU was killed by SIGKILL, not by sigwake (the host's OOM killer, a user)"))
KINDS["hang at power-off"] = kernel(ran(D), BootRecord("timeout", 90.0, 900, "the console was silent for 40 s",
                                                       kernel_started=True))


@pytest.mark.parametrize("kind", TABLE)
@pytest.mark.parametrize("command", ["run", "validate-patch", "bisect", "qa"])  # skips: the NA cells
def test_each_command_exits_by_each_kind(command: str, kind: str, catalogue: Catalogue, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    subject = KINDS[kind]
    got = {"run": lambda: run_exit(subject, catalogue),
           "validate-patch": lambda: validate_exit(GOOD, subject, catalogue),
           "bisect": lambda: bisect_exit(subject, catalogue),
           "qa": lambda: qa_exit(subject, catalogue, monkeypatch, tmp_path)}[command]()
    wanted = TABLE[kind][["run", "validate-patch", "bisect", "qa"].index(command)]
    if wanted is None:
        pytest.skip(f"{command} does not read what {kind} is made of")
    assert got == wanted, f"{command} given {kind} exits {got}, must exit {wanted}"


@pytest.mark.parametrize("kind, wanted", [
    ("regression", F),  # a base right in some runs, the patched kernel wrong in every one
    ("unjudgeable", U), ("nothing started", U), ("hang", U), ("crash", U), ("silent boot death", U),
    ("split", U), ("lost", F),
])
def test_validate_patch_over_a_base_it_cannot_judge(kind: str, wanted: int, catalogue: Catalogue) -> None:
    # the base is of the kind under judgement; the patched kernel is GOOD, but for a base that split: then
    # wrong in every run (regression), right in every run (split: five right runs do not prove the split
    # gone), or lost to a crash (lost)
    base = KINDS["split"] if kind in ("regression", "split", "lost") else KINDS[kind]
    patched = {"regression": KINDS["regression"], "lost": KINDS["crash"]}.get(kind, GOOD)
    assert validate_exit(base, patched, catalogue) == wanted


def test_validate_patch_over_two_kernels_that_refuse_a_case_could_not_test_it(catalogue: Catalogue) -> None:
    # run calls each a refusal (exit 1); between them the patch changed nothing that ran
    assert run_exit(KINDS["refusal"], catalogue) == FINDING
    assert validate_exit(KINDS["refusal"], KINDS["refusal"], catalogue) == COULD_NOT_TEST


def test_an_endpoint_the_kernel_failed_is_a_finding_and_one_the_target_failed_untested(catalogue: Catalogue) -> None:
    for kind, code in (("crash", F), ("hang", F), ("split", F), ("nothing started", U)):
        with pytest.raises(BisectError) as stopped:
            bisection(KINDS[kind], catalogue, at=0)
        assert stopped.value.exit_code == code, (kind, str(stopped.value))


def test_a_bisection_step_that_hangs_or_crashes_is_named_beside_the_answer(catalogue: Catalogue) -> None:
    for kind, problem in (("hang", "hang"), ("crash", "crash"), ("silent boot death", "crash"), ("split", "split")):
        report = bisection(KINDS[kind], catalogue)
        assert report.first_changed == ["c5"]  # certain: the step it met is no part of the answer
        [step] = [s for s in report.steps if s.candidate == "c3"]
        assert step.problem == problem, (kind, step)
        judged = gate.of_steps(CASE, report.first_changed, report.steps)
        assert any(f.kind == problem and f.kernel_id == "c3" for f in judged.findings), judged
        assert problem in judged.last_line()
    report = bisection(KINDS["nothing started"], catalogue)
    assert "skipped: c3" in report.summary(CASE)  # the answer names its skipped steps
    assert gate.of_steps(CASE, report.first_changed, report.steps).findings == []


def test_qa_says_what_its_bisections_could_not_do(catalogue: Catalogue, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    config = qa.QaConfig(RunConfig(REPO, REPO / "build", tmp_path, tmp_path / "results", ()))
    ends = (QaStep("p", "1", "bookworm", "not-delivered"), QaStep("p", "2", "trixie", "delivered"))
    for error, wanted in ((BisectError("p 1 has the old behaviour after p 2: not a single step"), F),
                          (BisectError("endpoint p 1 cannot be judged: boot timeout", 3), U)):
        def fail(*args: object, **kwargs: object) -> BisectReport:
            raise error
        monkeypatch.setattr(qa, "bisect_debian", fail)
        boundary, found = qa.find_boundary(config, QaLine("amd64", "rt"), *ends, None,  # type: ignore[arg-type]
                                           Progress(quiet=True))
        assert boundary.how.startswith("not bisected") and found.exit_code == wanted
    # a bisection that ran is stored as bisect's are, with its findings' exit code
    monkeypatch.setattr(qa, "bisect_debian", lambda *args, **kwargs: bisection(KINDS["hang"], catalogue))
    qa.find_boundary(config, QaLine("amd64", "rt"), *ends, None, Progress(quiet=True))  # type: ignore[arg-type]
    [stored] = list((tmp_path / "results" / "bisections").glob("*.json"))
    assert '"exit_code": 1' in stored.read_text() and '"problem": "hang"' in stored.read_text()


def test_qa_keeps_its_runs_findings_when_a_bisections_programs_do_not_build(catalogue: Catalogue, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    ends = (QaStep("p", "1", "bookworm", "not-delivered"), QaStep("p", "2", "trixie", "delivered"))
    monkeypatch.setattr(qa, "lines_of", lambda queries, summary: [QaLine("arm64", "generic")])
    monkeypatch.setattr(qa, "verdict_changes", lambda line: [ends])

    def no_programs(arch: str) -> Probe:
        raise BuildError(f"meson compile for {arch} failed")
    config = qa.QaConfig(RunConfig(REPO, REPO / "build", tmp_path, tmp_path / "results", ()))
    for run, wanted in ((GOOD, COULD_NOT_TEST), (KINDS["splat outside every case"], FINDING)):
        monkeypatch.setattr(qa, "run_kernels", lambda *args, **kwargs: RunSummary([as_result(run)]))
        [line], summary, found = qa.run_qa(config, no_programs, Progress(quiet=True))
        assert line.boundaries[0].how == "not bisected: meson compile for arm64 failed"
        assert summary_exit(summary, catalogue, found).exit_code == wanted  # the run's finding is not lost to the build


@pytest.mark.parametrize("mode, probed, wanted", [
    # the host: this machine's hypervisor gives no working debug registers
    ("native", "no: counted 0 of 1000 writes", NO_FINDING),
    ("native", "yes: counted 1000 of 1000 writes", FINDING),
    # a guest whose kernel refuses the event outright knows no such hardware: the machine's
    ("qemu", "no: perf_event_open: ENOENT: the kernel does not know this event type or config", NO_FINDING),
    # a TCG guest (QEMU emulates the debug registers) whose breakpoint opens and counts wrong: the kernel's
    ("qemu", "no: counted 0 of 1000 writes", FINDING),
    # a KVM guest: its debug registers are the host CPU's, through this machine's hypervisor
    ("qemu/kvm", "no: counted 0 of 1000 writes", NO_FINDING),
    ("qemu/kvm", "yes: counted 1000 of 1000 writes", FINDING),
])
def test_a_capability_this_machine_lacks_is_no_finding(mode: str, probed: str, wanted: int,
                                                       catalogue: Catalogue) -> None:
    failing = PeerResult("sigtrap_threads", "sigtrap_threads.remain_disabled", "fail", "no SIGTRAP")
    machine = dataclasses.replace(kernel(ran(D), peers=(failing,)), machine={"breakpoint": probed})
    machine.reproducers.append(dataclasses.replace(ran(D), name="sigtrap_inherit_thread"))
    assert summary_exit(RunSummary([as_result(machine, mode)]), catalogue).exit_code == wanted
    [said] = compare(as_result(machine, mode), catalogue)
    assert said.word.startswith("not comparable here (breakpoint: ") == (wanted == NO_FINDING), said.word
    # a selftest that did not finish is a finding even there: a missing feature fails or skips it
    hung = dataclasses.replace(machine, peers=[PeerResult("sigtrap_threads", "sigtrap_threads", "error", "TIMEOUT")])
    assert summary_exit(RunSummary([as_result(hung, mode)]), catalogue).exit_code == FINDING


def test_a_peers_known_disagreement_is_a_fact(catalogue: Catalogue) -> None:
    # bullseye's 5.10 has no attr.sigtrap: the case is refused, the selftest fails its setup
    old = dataclasses.replace(kernel(ran(D), peers=(PeerResult("sigtrap_threads", "sigtrap_threads.enable_event",
                                                               "fail", "ASSERT failed"),)), release="5.10.0-30-amd64")
    old.reproducers.append(dataclasses.replace(ran(Verdict.UNSUPPORTED), name="sigtrap_inherit_thread"))
    [said] = compare(as_result(old), catalogue)
    assert said.word.startswith("known (sigtrap_threads fails its setup") and said.finding is None
