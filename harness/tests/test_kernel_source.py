"""Kernels from source, for real, on one tree: Debian's linux-source-6.12 in a git repository with a
short history made here (base: the upstream fix taken out by kernel-patches/; an unrelated change; the
fix put back; another unrelated change). validate-patch shows watermark_sigio going from not-delivered
to delivered with the controls unchanged, bisect names exactly the fix commit, the head with the fix
reverted is a regression, and three of bench/mutants/ are each caught by the case made for their bug.
One tree, one config and one objects directory: the version is built cold once and every other build
is incremental (bench/kernel_build.py times 6.1's builds)."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from sigwake.programs.catalogue import Catalogue
from sigwake.programs import initramfs
from sigwake.kernels import kconfig
from sigwake.kernels import source_tree
from sigwake.programs.binaries import Binaries
from sigwake.commands.bisect import ListSearch, Probe, Probed, bisect, bisect_tree
from sigwake.core.exit_codes import COULD_NOT_TEST, FINDING
from sigwake.core.outcomes import Mark
from sigwake.judge import gate
from sigwake.kernels.build import BuildError, BuildRequest, KernelBuilder, git
from sigwake.commands.cli import REPO
from sigwake.targets.options import RunOptions
from sigwake.targets.qemu_run import run_qemu
from sigwake.judge.judgement import Outcome, findings, judge
from sigwake.kernels.kernels import KernelCache, file_kernel
from sigwake.core.model import KernelResult, Origin, Runner
from sigwake.commands.mutant_score import score_generated
from sigwake.commands.mutants import score
from sigwake.core.progress import Progress
from sigwake.targets.qemu import Accel
from sigwake.commands.validate import validate_patch
from sigwake.core.verdicts import Verdict

# One worker holds the tree and its objects: a second would build 6.12 cold again.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("kernel-source")]

PATCHES = Path(__file__).parent / "kernel-patches"
REVERT_6_12 = PATCHES / "0001-Revert-perf-ring_buffer-Trigger-IO-signals-for-watermark_wakeup-6.12.patch"
WARN_AT_BOOT_6_12 = PATCHES / "0001-perf-core-WARN-at-every-boot-6.12.patch"
CONTROLS = ("watermark_poll", "overflow_sigio")
PROGRESS = Progress(quiet=True)


@dataclass(frozen=True)
class History:
    tree: Path
    base: str
    unrelated: str
    fix: str
    head: str
    branch: str  # whatever git init named it
    fix_patch: Path  # the fix commit as a mail, for validate-patch


def touch_comment(tree: Path, path: str, text: str) -> None:
    with (tree / path).open("a") as f:
        f.write(f"/* {text} */\n")


@pytest.fixture(scope="session")
def builder(cache_root: Path) -> KernelBuilder:
    """Two more jobs than cores: this group is the suite's critical path (its cold build first), and the other
    test worker's guests then take the smaller share of the cores rather than half."""
    return KernelBuilder(cache_root, jobs=(os.cpu_count() or 1) + 2)


@pytest.fixture(scope="session")
def fragments() -> tuple[Path, ...]:
    """The default fragments and lkdtm, for every test here: one config per tree, so each version is built
    cold once and every other build of it is incremental (the splat test needs lkdtm; nothing else minds it)."""
    return (*kconfig.default_fragments(REPO / "kernel-configs"), REPO / "kernel-configs" / "lkdtm.config")


@pytest.fixture(scope="session")
def history_6_12(cache_root: Path, builder: KernelBuilder, tmp_path_factory: pytest.TempPathFactory) -> Iterator[History]:
    into = tmp_path_factory.mktemp("linux-6.12")
    tree = source_tree.unpack(KernelCache(cache_root), "6.12", into, PROGRESS)
    base = source_tree.apply_mail(tree, REVERT_6_12)  # before the fix: the kernel every 6.12 tree descends from
    touch_comment(tree, "kernel/sys.c", "an unrelated change")
    unrelated = source_tree.commit_all(tree, "sys: an unrelated change")
    git(tree, "revert", "--no-commit", base)
    fix = source_tree.commit_all(tree, "perf/ring_buffer: Trigger IO signals for watermark_wakeup")
    fix_patch = into / "0001-perf-ring_buffer-Trigger-IO-signals-for-watermark_wakeup.patch"
    fix_patch.write_text(git(tree, "-c", "diff.noprefix=false", "format-patch", "-1", "--stdout", fix))  # as git am reads it
    touch_comment(tree, "kernel/time/time.c", "another unrelated change")
    head = source_tree.commit_all(tree, "time: another unrelated change")
    yield History(tree, base, unrelated, fix, head, git(tree, "symbolic-ref", "--short", "HEAD").strip(), fix_patch)
    remove_tree(tree, builder)


@pytest.fixture(scope="session")
def tree_6_12(history_6_12: History) -> Path:
    """The tree at the history's head: the fix in, as in Debian's 6.12."""
    return history_6_12.tree


def remove_tree(tree: Path, builder: KernelBuilder) -> None:
    """A tree and its objects take gigabytes; the images stay cached under their keys."""
    shutil.rmtree(builder.objects_dir(tree), ignore_errors=True)
    shutil.rmtree(tree, ignore_errors=True)


def guest(accel: Accel) -> RunOptions:
    return RunOptions(accel, repeat=3, privileges=("root",))


def hung_guest(accel: Accel) -> RunOptions:
    """For kernels made never to reach a verdict: 25 s of silence is a hang here (a 6.12 guest prints its
    banner within 3 s alone, and shares the cores with the other test worker's guests), where a real run allows
    40 s, so the tests do not wait out the default."""
    return replace(guest(accel), quiet_limit_s=25.0)


def test_validate_patch_shows_the_fix_and_unchanged_controls(history_6_12: History, builder: KernelBuilder,
                                                           fragments: tuple[Path, ...], built: Binaries,
                                                           accel: Accel, tmp_path: Path) -> None:
    tree = history_6_12.tree
    git(tree, "checkout", "-q", history_6_12.unrelated)  # the commit before the fix
    try:
        programs = built.select(["watermark_sigio", *CONTROLS])
        result = validate_patch(builder, tree, fragments, (history_6_12.fix_patch,), programs, guest(accel), tmp_path,
                                PROGRESS, jobs=2)  # base and patched boot at once
    finally:
        git(tree, "checkout", "-q", history_6_12.branch)
    outcomes = {c.case: c for c in result.changes}
    sigio = outcomes["watermark_sigio"]
    assert sigio.outcome == "fixes", str(sigio)
    assert sigio.before.evidence["signals"] == 0 and sigio.before.evidence["pollin"] == 1
    assert sigio.after.evidence["signals"] >= 1
    for control in CONTROLS:
        assert outcomes[control].outcome == "no change", str(outcomes[control])
        assert outcomes[control].after.verdict is Verdict.DELIVERED
    assert git(tree, "status", "--porcelain", "--untracked-files=no") == ""  # the patch was taken back out


def test_bisect_names_the_fix_commit_and_leaves_the_tree(history_6_12: History, builder: KernelBuilder,
                                                        fragments: tuple[Path, ...], built: Binaries,
                                                        accel: Accel, cache_root: Path, tmp_path: Path) -> None:
    tree = history_6_12.tree
    probe = Probe(built.select(["watermark_sigio"]), "watermark_sigio", "watermark_sigio", guest(accel), tmp_path)
    # "HEAD" on purpose: a name that moves once an endpoint is checked out.
    report = bisect_tree(builder, tree, fragments, history_6_12.base, "HEAD", probe, PROGRESS)
    assert report.first_changed == [history_6_12.fix] and report.last_old == history_6_12.unrelated
    assert (report.old, report.new) == (Verdict.NOT_DELIVERED, Verdict.DELIVERED)
    assert report.confidence == 1.0 and all(s.mark is not Mark.SKIP for s in report.steps)
    assert git(tree, "rev-parse", "--abbrev-ref", "HEAD").strip() == history_6_12.branch
    assert git(tree, "rev-parse", "HEAD").strip() == history_6_12.head
    assert git(tree, "status", "--porcelain", "--untracked-files=no") == ""


def test_config_check_names_what_the_tree_dropped(history_6_12: History, builder: KernelBuilder,
                                                  fragments: tuple[Path, ...], tmp_path: Path) -> None:
    optional = tmp_path / "wishful.config"
    optional.write_text("# sigwake: optional\nCONFIG_SIGWAKE_NO_SUCH_OPTION=y\n")
    built = builder.build(BuildRequest(history_6_12.tree, (*fragments, optional)), PROGRESS)
    assert built.warnings == ["CONFIG_SIGWAKE_NO_SUCH_OPTION=y requested by wishful.config, the tree gave n"]
    essential = tmp_path / "required.config"
    essential.write_text("# sigwake: essential\nCONFIG_SIGWAKE_NO_SUCH_OPTION=y\n")
    with pytest.raises(BuildError, match="CONFIG_SIGWAKE_NO_SUCH_OPTION=y requested by required.config"):
        builder.build(BuildRequest(history_6_12.tree, (*fragments, essential)), PROGRESS)


def test_6_12_with_the_fix_reverted_is_a_regression(tree_6_12: Path, builder: KernelBuilder,
                                                    fragments: tuple[Path, ...], built: Binaries, accel: Accel,
                                                    tmp_path: Path) -> None:
    programs = built.select(["watermark_sigio", "bpf_output_sigio", *CONTROLS])
    result = validate_patch(builder, tree_6_12, fragments, (REVERT_6_12,), programs, guest(accel), tmp_path, PROGRESS,
                            jobs=2)  # base and reverted boot at once
    outcomes = {c.case: c for c in result.changes}
    for case in ("watermark_sigio", "bpf_output_sigio", "bpf_output_wakeup_events"):
        assert outcomes[case].outcome == "regresses", str(outcomes[case])  # BPF runs on our own kernels too
    for control in (*CONTROLS, "bpf_output_perf_buffer"):
        assert outcomes[control].outcome == "no change", str(outcomes[control])


def test_a_patch_that_warns_at_boot_is_a_finding(tree_6_12: Path, builder: KernelBuilder,
                                                  fragments: tuple[Path, ...], built: Binaries, accel: Accel,
                                                  tmp_path: Path) -> None:
    # A one-line WARN_ON in perf_event_init(), an __init function: printed before any case, so only the
    # comparison of every kernel report outside the cases can see it.
    programs = built.select(["watermark_sigio"])
    result = validate_patch(builder, tree_6_12, fragments, (WARN_AT_BOOT_6_12,), programs, guest(accel), tmp_path,
                            PROGRESS, jobs=2)
    assert result.changes and {c.outcome for c in result.changes} == {"no change"}, [str(c) for c in result.changes]
    assert len(result.reports) == 1 and result.reports[0].startswith("WARNING in perf_event_init (outside every case")
    judged = result.gate  # as validate-patch judges it
    assert judged.exit_code == FINDING and judged.last_line() == "findings: 1 (1 report)"


HANG_BEFORE_INIT = ("\tif (ramdisk_execute_command) {\n\t\tret = run_init_process(ramdisk_execute_command);",
                    "\tpr_info(\"sigwake test: this kernel hangs before init\\n\");\n"
                    "\tfor (;;)\n\t\tschedule_timeout_interruptible(HZ);\n")


@contextlib.contextmanager
def main_c_changed(tree: Path, old: str, new: str) -> Iterator[Path]:
    """The tree with the one `old` of init/main.c made `new`, uncommitted, until the test is done."""
    main = tree / "init" / "main.c"
    text = main.read_text()
    assert text.count(old) == 1
    main.write_text(text.replace(old, new))
    try:
        yield tree
    finally:
        git(tree, "checkout", "-q", "--", "init/main.c")


@pytest.fixture
def hanging_6_12(tree_6_12: Path) -> Iterator[Path]:
    """The 6.12 tree, changed (uncommitted) so that its kernel starts, prints its banner and hangs in
    kernel_init() before it runs our init: a base that cannot judge anything, a bisection step that hangs."""
    with main_c_changed(tree_6_12, HANG_BEFORE_INIT[0], HANG_BEFORE_INIT[1] + HANG_BEFORE_INIT[0]) as tree:
        yield tree


def test_a_base_that_cannot_boot_could_not_test_and_a_hung_bisection_step_is_a_finding(
        hanging_6_12: Path, builder: KernelBuilder, fragments: tuple[Path, ...], built: Binaries, accel: Accel,
        tmp_path: Path, catalogue: Catalogue) -> None:
    programs = built.select(["watermark_sigio"])
    result = validate_patch(builder, hanging_6_12, fragments, (REVERT_6_12,), programs, hung_guest(accel), tmp_path,
                            PROGRESS, jobs=2)
    assert result.changes and {c.outcome for c in result.changes} == {"could not test"}, [str(c) for c in result.changes]
    judged = result.gate  # as validate-patch judges it
    assert judged.exit_code == COULD_NOT_TEST and judged.last_line().startswith("findings: none; not tested: ")
    # The same kernel as a bisection step: the boot's hang is the step's problem, a finding beside the answer.
    kernel = builder.build(BuildRequest(hanging_6_12, fragments), PROGRESS)
    assert kernel.cached  # the base validate-patch built
    probe = Probe(programs, "watermark_sigio", "watermark_sigio", hung_guest(accel), tmp_path)
    probed = probe.judge(file_kernel(kernel.image), "hang")
    assert (probed.verdict, probed.problem) == (None, "hang"), probed
    assert "boot timeout" in probed.note and "silent" in probed.note

    class Tester:  # the ends as known; the middle commit is the hanging kernel, judged as bisect judges it
        def judge(self, candidate: str) -> Probed:
            ends = {"c0": Probed(Verdict.NOT_DELIVERED, "5 runs"), "c2": Probed(Verdict.DELIVERED, "5 runs")}
            return ends.get(candidate) or probed
    report = bisect(ListSearch(["c0", "c1", "c2"]), Tester(), "c0", "c2")
    assert [s.mark for s in report.steps if s.candidate == "c1"] == [Mark.SKIP] and "skipped: c1" in report.summary("watermark_sigio")
    found = gate.of_steps("watermark_sigio", report.first_changed, report.steps)
    assert found.exit_code == FINDING and "hang" in [f.kind for f in found.findings], found


PANIC_BEFORE_CONSOLE = ("\tsetup_arch(&command_line);\n",
                        "\tsetup_arch(&command_line);\n\tpanic(\"sigwake test: this kernel panics before its console\");\n")


@pytest.fixture
def early_panic_6_12(tree_6_12: Path) -> Iterator[Path]:
    """The 6.12 tree, changed (uncommitted) so that its kernel panics right after setup_arch(), before
    console_init(): only an early console shows that it started at all."""
    with main_c_changed(tree_6_12, *PANIC_BEFORE_CONSOLE) as tree:
        yield tree


def test_a_kernel_that_panics_before_its_console_is_a_step_with_a_problem_not_a_silent_skip(
        early_panic_6_12: Path, builder: KernelBuilder, fragments: tuple[Path, ...], built: Binaries, accel: Accel,
        tmp_path: Path) -> None:
    kernel = builder.build(BuildRequest(early_panic_6_12, fragments), PROGRESS)
    probe = Probe(built.select(["watermark_sigio"]), "watermark_sigio", "watermark_sigio", hung_guest(accel), tmp_path)
    probed = probe.judge(file_kernel(kernel.image), "early")
    assert probed.booted is not None and probed.booted.result.boot.kernel_started, probed  # earlycon: its banner
    # panic= is not parsed yet, so the kernel sits in its panic until the console's silence ends the boot
    assert probed.verdict is None and probed.problem in ("crash", "hang"), probed
    assert "Kernel panic - not syncing: sigwake test: this kernel panics before its console" in probed.note


def test_a_warning_an_oops_and_a_panic_are_findings_and_a_crash_hides_nothing(
        tree_6_12: Path, builder: KernelBuilder, fragments: tuple[Path, ...], built: Binaries,
        test_programs: dict[str, Path], accel: Accel, tmp_path: Path, catalogue: Catalogue) -> None:
    # A 6.12 guest with lkdtm: the stand-in makes the kernel WARN, then BUG (an Oops that kills the program,
    # not the kernel), then panic (the boot ends), then runs one more case; every case that survives says
    # "delivered", so only the kernel's reports can fail them.
    kernel = builder.build(BuildRequest(tree_6_12, fragments), PROGRESS)
    assert kernel.warnings == []  # lkdtm is in: the tree dropped no option asked for
    programs = {"provoke": test_programs["provoke"]}
    initrd = initramfs.write(initramfs.guest_entries(built.init, programs), tmp_path / "provoke.cpio")
    log = tmp_path / "console.log"
    got = run_qemu(file_kernel(kernel.image), initrd, sorted(programs),
                    RunOptions(accel, repeat=1, privileges=("root",)), log)
    by_case = {s.case: s for s in got.splats}
    warning, bug, panic = by_case["provoke_warning"], by_case["provoke_bug"], by_case["provoke_panic"]
    assert warning.title == "WARNING in lkdtm_WARNING" and warning.privilege == "root"
    assert int(warning.tainted_after) & 512 and not int(warning.tainted_before) & 512  # TAINT_WARN, set by it
    assert bug.title == "kernel BUG in lkdtm_BUG" and not bug.fatal  # an Oops without a panic
    assert panic.title == "kernel panic: dumptest" and panic.fatal
    lines = log.read_text().split("\n")
    assert all(lines[s.console_line - 1].find(s.report.splitlines()[0]) >= 0 for s in got.splats)
    # The panic ended the first boot; the run after it went on in a fresh one, said in the boot's detail.
    assert (got.boot.status, got.boot.boots) == ("boot-failed", 2), got.boot
    assert "the runs after it went on in 1 fresh boot(s): boot 2: ok" in got.boot.detail
    verdicts = {r.name: r for r in got.reproducers}
    assert verdicts["provoke_warning"].verdict is Verdict.DELIVERED  # its verdict was right ...
    assert verdicts["provoke_bug"].verdict is Verdict.ERROR  # killed in the middle of its write()
    assert verdicts["provoke_panic"].verdict is Verdict.BOOT_FAILED  # was running when the boot ended
    assert verdicts["provoke_after"].verdict is Verdict.DELIVERED  # ran in the fresh boot
    result = KernelResult("lkdtm-6.12", got.release, Origin("file"), Runner("qemu", 1), got.boot, got.reproducers,
                          "2026-11-30T00:00:00+00:00", "test", got.paranoid, got.splats)
    judged = {r.name: judge(result, r, catalogue) for r in result.reproducers}
    assert (judged["provoke_warning"].outcome, judged["provoke_warning"].finding) == (Outcome.FAIL, "splat")
    assert "WARNING in lkdtm_WARNING" in judged["provoke_warning"].why  # ... and the splat fails it
    assert judged["provoke_bug"].finding == judged["provoke_panic"].finding == "splat"
    assert judged["provoke_after"].outcome is Outcome.PASS or judged["provoke_after"].finding is None
    assert sorted(f.kind for f in findings([result], catalogue)) == ["crash", "splat", "splat", "splat"]
    # the image is one sigwake built: its origin names the tree's commit, its config and when it was built
    origin = file_kernel(kernel.image).origin
    assert origin.git_commit == git(tree_6_12, "rev-parse", "HEAD").strip() and "lkdtm.config" in (origin.config or "")


def test_generated_mutants_are_built_booted_and_scored_end_to_end(tree_6_12: Path, builder: KernelBuilder,
                                                                   fragments: tuple[Path, ...], built: Binaries,
                                                                   accel: Accel, tmp_path: Path) -> None:
    # Coccinelle over perf_output_wakeup() of Debian's 6.12: the first statement deleted (the rb->poll set that
    # makes perf_poll() report POLLIN) and EPOLLIN swapped for its neighbour EPOLLHUP. Both take the wakeup away.
    programs = built.select(["watermark_sigio", "watermark_poll"])
    path = {"kernel/events/ring_buffer.c": ("perf_output_wakeup",)}
    records = score_generated(builder, tree_6_12, fragments, programs, RunOptions(accel, repeat=2, privileges=("root",)),
                              tmp_path, PROGRESS, per_group=1, path=path, operators=("statement", "sibling"))
    by_operator = {r.operator: r for r in records}
    assert set(by_operator) == {"statement", "sibling"}
    assert "atomic_set(&handle->rb->poll" in by_operator["statement"].diff
    assert "+\tatomic_set(&handle->rb->poll, EPOLLHUP | EPOLLRDNORM);" in by_operator["sibling"].diff
    for record in records:
        assert record.verdict == "killed", (record.name, record.why)
        assert any("watermark_poll [root]: regresses" in k and "no-wakeup" in k for k in record.killed_by), record
    # a second call judges nothing again: every record is kept
    again = score_generated(builder, tree_6_12, fragments, programs, RunOptions(accel, repeat=2, privileges=("root",)),
                            tmp_path, PROGRESS, per_group=1, path=path, operators=("statement", "sibling"))
    assert again == records


# Three mutants from three files, each with the case made for its bug and what that case must say.
MUTANTS = REPO / "bench" / "mutants"
CAUGHT_BY = {
    "04-overflow-without-pending-kill": ("overflow_sigio", Verdict.NOT_DELIVERED),
    "06-owner-tid-treated-as-owner-pid": ("setown_ex_tid_watermark", Verdict.MISDELIVERED),
    "10-two-signals-per-watermark-wakeup": ("exactly_once", Verdict.WRONG_COUNT),
}


def test_mutants_are_caught_by_the_case_made_for_their_bug(tree_6_12: Path, builder: KernelBuilder,
                                                           fragments: tuple[Path, ...], built: Binaries,
                                                           accel: Accel, tmp_path: Path) -> None:
    programs = built.select(["overflow_sigio", "setown_ex_tid", "exactly_once", "watermark_poll"])
    patches = [MUTANTS / f"{name}.patch" for name in CAUGHT_BY]
    results = {r.name: r for r in score(builder, tree_6_12, fragments, patches, programs, guest(accel), tmp_path,
                                        PROGRESS)}
    for name, (case, verdict) in CAUGHT_BY.items():
        changed = {c.case: c for c in results[name].detected_by}
        assert case in changed, (name, [str(c) for c in results[name].changes])
        assert changed[case].outcome == "regresses" and changed[case].after is not None
        assert changed[case].after.verdict is verdict, str(changed[case])
        assert "watermark_poll" not in changed, str(changed["watermark_poll"])  # the control stays put
