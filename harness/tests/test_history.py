"""The kernel-history score's inputs and figure: subjects read from a Debian changelog as its stable updates
list them, bench/history/fixes.tsv read strictly and agreeing with the patches beside it, and a score that
states its population and counts only what was judged."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sigwake.commands.history_score import (Fix, FixesError, HistoryRecord, named_fixes, read_fixes, record_of,
                                            render, unclassified, write_score)
from sigwake.core import schema

HISTORY = Path(__file__).resolve().parents[2] / "bench" / "history"

# Debian's changelog format (debian/changelog of src:linux): entries by version, stable subjects as "    - ".
CHANGELOG = """\
linux (6.12.118-1) trixie; urgency=medium

  * New upstream stable update:
    https://www.kernel.org/pub/linux/kernel/v6.x/ChangeLog-6.12.118
    - perf/core: Don't send SIGTRAP after exec removed the event
    - drm/amdgpu: unrelated
    - perf: Fix data race between perf_event_set_output() and
      perf_mmap_close()

 -- Someone <someone@debian.org>  Mon, 02 Nov 2026 10:00:00 +0100

linux (6.12.95-1) trixie; urgency=medium

  * New upstream stable update:
    - perf/core: Don't send SIGTRAP after exec removed the event
    - fs/fcntl: fix SOFTIRQ-unsafe lock order in fasync signaling
  * [amd64] perf: a Debian change, not a stable subject

 -- Someone <someone@debian.org>  Mon, 01 Jun 2026 10:00:00 +0100
"""


def test_subjects_come_with_every_debian_version_that_names_them() -> None:
    named = named_fixes(CHANGELOG)
    assert named == {
        "perf/core: Don't send SIGTRAP after exec removed the event": ["6.12.118-1", "6.12.95-1"],
        "perf: Fix data race between perf_event_set_output() and perf_mmap_close()": ["6.12.118-1"],
        "fs/fcntl: fix SOFTIRQ-unsafe lock order in fasync signaling": ["6.12.95-1"],
    }


def test_a_subject_fixes_tsv_does_not_classify_is_named() -> None:
    named = named_fixes(CHANGELOG)
    fixes = [Fix("fs/fcntl: fix SOFTIRQ-unsafe lock order in fasync signaling", "left-out", "", "", "lockdep only")]
    assert unclassified(named, fixes) == sorted(set(named) - {fixes[0].subject})


def test_fixes_tsv_is_read_strictly(tmp_path: Path) -> None:
    tsv = tmp_path / "fixes.tsv"
    tsv.write_text("subject\tdecision\tcommit\tpatch\twhy\nperf: x\tmaybe\t\t\twhy\n")
    with pytest.raises(FixesError, match="fixes.tsv:2"):
        read_fixes(tsv)
    tsv.write_text("subject\tdecision\tcommit\tpatch\twhy\nperf: x\tkept\tnothex\tx.patch\twhy\n")
    with pytest.raises(FixesError, match="not a commit hash"):
        read_fixes(tsv)


def test_the_committed_fixes_and_patches_agree() -> None:
    fixes = read_fixes(HISTORY / "fixes.tsv")
    assert len({f.subject for f in fixes}) == len(fixes), "one row per subject"
    named = {f.patch for f in fixes if f.patch}
    assert all(f.decision == "kept" for f in fixes if f.patch), "only kept fixes are re-created"
    assert named == {p.name for p in HISTORY.glob("*.patch")}, "every patch has its row, every row's patch exists"
    for name in sorted(named):
        text = (HISTORY / name).read_text()
        assert re.search(r"^Subject: \[PATCH\] history: ", text, re.M), name
        assert re.search(r"^diff --git a/\S+ b/\S+$", text, re.M) and "\n@@ " in text, name


def test_the_score_counts_only_judged_bugs_and_states_its_population(tmp_path: Path) -> None:
    fixes = [Fix("perf: a", "kept", "0123456789ab", "a.patch", "a case sees it"),
             Fix("perf: b", "kept", "", "b.patch", "a race out of reach: a stress case would"),
             Fix("perf: c", "kept", "", "", "not re-created: the revert breaks the build"),
             Fix("perf: d", "left-out", "", "", "hardware PMU only")]
    records = [HistoryRecord("perf: a", "0123456789ab", "a.patch", "caught", ["sigtrap_exec_fault [root] regression"],
                             debian=["6.12.118-1"], config="perf", programs="216da55c0ffe"),
               HistoryRecord("perf: b", "", "b.patch", "missed", why="a race out of reach: a stress case would",
                             config="perf"),
               record_of(fixes[2], None, [])]
    named = {f.subject: ["6.12.118-1"] for f in fixes}
    text = render(records, fixes, named, ["linux-source-6.12 6.12.118-1"])
    assert "**1 of 2 re-created bugs reported by validate-patch (50.0%)**" in text
    assert "1 not-re-created" in text and "4 subjects" in text and "3 kept" in text and "1 left out" in text
    assert "- perf: b (missed): a race out of reach" in text and "- hardware PMU only: 1" in text
    assert record_of(fixes[1], None, []).verdict == "not-judged"
    # Which reproducers judged each record, said beside the figure: a record kept from before is named so.
    assert ("Judged by the reproducers of sigwake 216da55c0ffe (1 fix); not recorded (judged before the score "
            "kept it) (1 fix)") in text
    json_path, md_path = write_score(tmp_path, records, text, 12.0)
    schema.check("history-score", json.loads(json_path.read_text()))
    assert md_path.read_text() == text


def test_a_bug_named_twice_is_judged_and_counted_once() -> None:
    from sigwake.commands.history_score import judged_once
    fixes = [Fix("perf: x", "kept", "", "x.patch", "a case sees it"),
             Fix("perf: x (CVE-2026-1)", "kept", "0123456789ab", "x.patch", "a case sees it"),
             Fix("perf: y", "kept", "", "", "not re-created: too big"),
             Fix("perf: y (CVE-2026-2)", "kept", "", "", "not re-created: too big"), Fix("perf: z", "left-out", "", "", "tools")]
    once = judged_once(fixes)
    assert [f.title for f in once] == ["perf: x (also named: perf: x (CVE-2026-1))",
                                       "perf: y (also named: perf: y (CVE-2026-2))"]
    assert once[0].commit == "0123456789ab" and once[0].subjects == ("perf: x", "perf: x (CVE-2026-1)")
