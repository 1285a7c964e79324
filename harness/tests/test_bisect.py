"""The bisection driver without a kernel: a fake tester that answers from a table,
over a list of candidates and over a real (tiny) git history. Skips, flaky steps,
third verdicts, bad endpoints, both directions; and how many judgements it took."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from sigwake.commands.bisect import BisectError, GitSearch, ListSearch, Probed, bisect, bisect_tree
from sigwake.core.exit_codes import USAGE
from sigwake.core.outcomes import Mark
from sigwake.kernels.build import git
from sigwake.kernels.source_tree import commit_all
from sigwake.core.verdicts import Verdict

D, N, W = Verdict.DELIVERED, Verdict.NOT_DELIVERED, Verdict.NO_WAKEUP


Answer = Verdict | None | dict[str, int]  # a verdict in every run, none (a failed build), or runs that split


@dataclass
class FakeTester:
    """Answers from a table, as a probe would: a verdict in every run, None (a build or boot failure), or the
    runs of each verdict when they split."""

    answers: dict[str, Answer]
    asked: list[str] = field(default_factory=list)

    def judge(self, candidate: str) -> Probed:
        self.asked.append(candidate)
        answer = self.answers[candidate]
        if isinstance(answer, dict):
            return Probed(Verdict.FLAKY, f"split: {answer}", answer)
        return Probed(answer, str(answer) if answer is not None else "build failed",
                      {str(answer): 3} if answer is not None else {})


def history(*verdicts: Verdict | None) -> dict[str, Verdict | None]:
    return {f"c{i}": v for i, v in enumerate(verdicts)}


@pytest.mark.parametrize("answers, first, last_old", [
    # a fix: not-delivered up to c4, delivered from c5
    (history(N, N, N, N, N, D, D, D), ["c5"], "c4"),
    # a regression: the other direction
    (history(D, D, N, N, N, N, N, N), ["c2"], "c1"),
    # the change at the very first step after the old end, and at the new end itself
    (history(N, D, D, D, D), ["c1"], "c0"),
    (history(N, N, N, N, D), ["c4"], "c3"),
    # a skip in the middle is stepped past
    (history(N, N, None, N, D, D, D, D), ["c4"], "c3"),
    # a skip right before the change leaves both as candidates: it might have been the first
    (history(N, N, N, None, D, D, D, D), ["c3", "c4"], "c2"),
    # a third verdict says nothing about this change: skipped like a failed build
    (history(N, N, W, N, N, D, D, D), ["c5"], "c4"),
    # skips next to the change leave a range, and the confidence says so
    (history(N, N, None, None, D, D), ["c2", "c3", "c4"], "c1"),
])
def test_the_driver_finds_the_change(answers: dict[str, Verdict | None], first: list[str], last_old: str) -> None:
    names = list(answers)
    tester = FakeTester(answers)
    report = bisect(ListSearch(names), tester, names[0], names[-1])
    assert report.first_changed == first and report.last_old == last_old
    assert (report.old, report.new) == (answers[names[0]], answers[names[-1]])
    assert report.confidence == pytest.approx(1 / len(first))
    assert [s.candidate for s in report.steps] == tester.asked  # every judgement is in the report
    assert [s.mark for s in report.steps[:2]] == [Mark.OLD, Mark.NEW]
    skips = sum(s.mark is Mark.SKIP for s in report.steps)
    assert len(tester.asked) <= 2 + math.ceil(math.log2(len(names))) + skips


SPLIT_C4 = {"not-delivered": 2, "delivered": 3}  # c4 loses the signal in 2 runs of 5


@pytest.mark.parametrize("rule, first, mark", [
    # the default: c4 still reproduces the old behaviour in some runs, so it has it: the fix is c5
    ("old", ["c5"], Mark.OLD),
    # marked by the new verdict's presence instead: c4 is where the new behaviour starts showing
    ("new", ["c4"], Mark.NEW),
    # never judged: the answer is a range that says it could be either
    ("skip", ["c4", "c5"], Mark.SKIP),
])
def test_a_step_whose_runs_split_is_marked_by_the_rule_and_says_so(rule: str, first: list[str], mark: Mark) -> None:
    answers: dict[str, Answer] = {**history(N, N, N, N, N, D, D, D), "c4": SPLIT_C4}
    report = bisect(ListSearch(list(answers)), FakeTester(answers), "c0", "c7", split=rule)
    assert report.first_changed == first
    step = next(s for s in report.steps if s.candidate == "c4")
    assert step.mark is mark and step.verdict is Verdict.FLAKY
    if rule != "skip":
        assert f"marked {rule} (split rule {rule})" in step.note


def test_an_endpoint_whose_runs_split_cannot_start_a_bisection() -> None:
    answers: dict[str, Answer] = {**history(N, N, D), "c0": SPLIT_C4}
    with pytest.raises(BisectError, match="endpoint c0 cannot be judged: split") as raised:
        bisect(ListSearch(list(answers)), FakeTester(answers), "c0", "c2")
    assert raised.value.exit_code == 3


@pytest.mark.parametrize("answers, why", [
    (history(None, N, D), "endpoint c0 cannot be judged: build failed"),
    (history(N, N, None), "endpoint c2 cannot be judged"),
    (history(D, N, D), "both endpoints are delivered"),
])
def test_bad_endpoints_stop_before_any_search(answers: dict[str, Verdict | None], why: str) -> None:
    tester = FakeTester(answers)
    with pytest.raises(BisectError, match=why):
        bisect(ListSearch(list(answers)), tester, "c0", "c2")
    assert tester.asked == ["c0", "c2"]


def test_large_ranges_take_about_log2_judgements() -> None:
    answers = {f"p{i:03}": (N if i < 613 else D) for i in range(1000)}
    tester = FakeTester(answers)
    report = bisect(ListSearch(list(answers)), tester, "p000", "p999")
    assert report.first_changed == ["p613"]
    assert len(tester.asked) <= 2 + math.ceil(math.log2(1000))


def test_git_search_drives_git_bisect_and_leaves_the_tree(tmp_path: Path) -> None:
    # Ten commits; the file says which behaviour each one has.
    git(tmp_path, "init", "-q")
    commits = []
    for i in range(10):
        (tmp_path / "behaviour").write_text("new\n" if i >= 6 else "old\n")
        (tmp_path / "counter").write_text(f"{i}\n")
        commits.append(commit_all(tmp_path, f"commit {i}"))
    branch = git(tmp_path, "symbolic-ref", "--short", "HEAD").strip()
    asked: list[str] = []

    class FileTester:
        def judge(self, candidate: str) -> Probed:
            asked.append(candidate)
            git(tmp_path, "checkout", "-q", candidate)
            if candidate == commits[3]:
                return Probed(None, "build failed")
            return Probed(D if (tmp_path / "behaviour").read_text() == "new\n" else N, "read")

    report = bisect(GitSearch(tmp_path), FileTester(), commits[0], commits[9])
    assert report.first_changed == [commits[6]] and report.last_old == commits[5]
    assert all(s.mark is Mark.SKIP for s in report.steps if s.candidate == commits[3])
    assert git(tmp_path, "symbolic-ref", "--short", "HEAD").strip() == branch  # back on its branch
    assert git(tmp_path, "rev-parse", "HEAD").strip() == commits[9]
    assert not (tmp_path / ".git" / "BISECT_LOG").exists()  # git bisect reset ran


@pytest.mark.parametrize("jobs", [2, 3])
def test_several_packages_per_round_find_the_same_change_in_fewer_rounds(jobs: int) -> None:
    answers = {f"p{i:02}": (N if i < 37 else D) for i in range(60)}
    answers["p20"] = None  # a skip along the way
    tester = FakeTester(answers)
    report = bisect(ListSearch(list(answers)), tester, "p00", "p59", jobs=jobs)
    assert report.first_changed == ["p37"] and report.last_old == "p36"
    rounds = math.ceil(math.log(60, jobs + 1)) + 1  # each round cuts what is left into jobs + 1 parts
    assert len(tester.asked) <= 2 + jobs * (rounds + 1)
    assert sorted(s.candidate for s in report.steps) == sorted(tester.asked)


def test_a_change_that_is_not_one_step_is_said_when_probes_disagree() -> None:
    answers = history(N, D, N, N, N, D, D)  # c1 new, c3 old again: no single boundary
    with pytest.raises(BisectError, match="not a single step"):
        bisect(ListSearch(list(answers)), FakeTester(answers), "c0", "c6", jobs=3)


def test_a_tree_with_uncommitted_changes_is_the_command_lines_error_not_a_finding(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "f").write_text("one\n")
    commit = commit_all(tmp_path, "one")
    (tmp_path / "f").write_text("two\n")
    with pytest.raises(BisectError) as refused:
        bisect_tree(None, tmp_path, (), commit, commit, None, None)  # type: ignore[arg-type]  # refused before any use
    assert refused.value.exit_code == USAGE and "uncommitted changes" in str(refused.value)
