"""The kernel's own history as a score: the upstream fixes to the signal path that
Debian's changelogs name (each stable update lists its upstream subjects), each
classified in bench/history/fixes.tsv as kept (a program can observe the bug) or
left out (and why); each kept fix re-created as a patch that puts its bug back on
Debian's linux-source-6.12 and judged as a mutant is (commands/mutants.py). A bug
no case reports stays missed, with why beside it; a subject the changelogs name
that fixes.tsv does not classify is named, never scored silently."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..core.atomic import atomic_write
from ..core.schema import CURRENT
from ..store.store import write_checked
from ..core.typed_json import to_data
from .mutant_score import SAME_CODE
from .mutants import MutantResult

# The subjects of fixes to the path: perf's core and ring buffer, fcntl's owners and fasync, the perf part of
# signal.c. fixes.tsv decides which of them are in the path; a subject outside these words is not looked at.
PATH_SUBJECT = re.compile(r"(perf(/core|/ring_buffer|/aux)?|fcntl|fs/fcntl|signal)[:,] ")

VERDICTS = ("caught", "missed", "build-failed", "boot-failed", "not-re-created", "not-judged")
DECISIONS = ("kept", "left-out")


@dataclass(frozen=True)
class Fix:
    """One row of bench/history/fixes.tsv."""

    subject: str
    decision: str  # one of DECISIONS
    commit: str  # the mainline commit, where a mail or revlist confirmed it; "" otherwise
    patch: str  # the re-creation's file in bench/history/ ("" when it could not be re-created)
    why: str  # kept: what a program sees with the bug back; left out: why not
    also_named: tuple[str, ...] = ()  # the other rows' subjects for the same bug (judged_once() joins them)

    @property
    def subjects(self) -> tuple[str, ...]:
        return (self.subject, *self.also_named)

    @property
    def title(self) -> str:
        """The subject as the score shows it, with the bug's other names."""
        return self.subject + (f" (also named: {'; '.join(self.also_named)})" if self.also_named else "")


@dataclass(frozen=True)
class HistoryRecord:
    subject: str
    commit: str
    patch: str
    verdict: str  # one of VERDICTS
    caught_by: list[str] = field(default_factory=list)  # the changes validate-patch reported, as it says them
    why: str = ""  # the row's why; for a failed build or boot, the error after it
    debian: list[str] = field(default_factory=list)  # the Debian versions whose changelog entry names the fix
    config: str = ""  # the kernel-configs fragments of the kernels it was judged on
    programs: str = ""  # the sigwake commit whose reproducers judged it (source_commit()); "" from before schema 2

    @property
    def name(self) -> str:
        """Its patch's stem: what its stored record is named by."""
        return Path(self.patch).stem


class FixesError(ValueError):
    pass


def read_fixes(tsv: Path) -> list[Fix]:
    """fixes.tsv: a header line, then subject, decision, commit, patch, why (tab-separated)."""
    lines = tsv.read_text().splitlines()
    if not lines or lines[0].split("\t") != ["subject", "decision", "commit", "patch", "why"]:
        raise FixesError(f"{tsv}: the first line must be the header subject, decision, commit, patch, why")
    fixes = []
    for number, line in enumerate(lines[1:], start=2):
        cells = line.split("\t")
        if len(cells) != 5 or cells[1] not in DECISIONS or not cells[4].strip():
            raise FixesError(f"{tsv}:{number}: five cells, a decision of {', '.join(DECISIONS)} and a why")
        if cells[2] and not re.fullmatch(r"[0-9a-f]{12,40}", cells[2]):
            raise FixesError(f"{tsv}:{number}: commit {cells[2]!r} is not a commit hash")
        fixes.append(Fix(*cells))
    return fixes


def named_fixes(changelog: str) -> dict[str, list[str]]:
    """Subject -> the Debian versions whose entry lists it, for every path subject in a changelog.Debian text.
    An entry starts `linux (VERSION) suite; ...`; a stable update lists one upstream subject per `    - `
    line, continued on lines indented further."""
    named: dict[str, list[str]] = {}
    version, subject = "", ""

    def close() -> None:
        if subject and PATH_SUBJECT.match(subject):
            versions = named.setdefault(subject, [])
            if version not in versions:
                versions.append(version)

    for line in changelog.splitlines():
        if header := re.match(r"linux \(([^)]+)\)", line):
            close()
            version, subject = header[1], ""
        elif line.startswith("    - "):
            close()
            subject = line[6:].strip()
        elif subject and line.startswith("      ") and line.strip():
            subject += " " + line.strip()
        else:
            close()
            subject = ""
    close()
    return named


CVE_SUFFIX = re.compile(r" \(CVE-\d{4}-\d+\)$")


def judged_once(fixes: list[Fix]) -> list[Fix]:
    """The kept fixes, one per bug: rows that share a patch, or a subject but for a " (CVE-...)" suffix (a
    subject named again with its CVE, re-created or not), are one bug, judged and counted once, under the first
    row's subject with the others' as its other names."""
    merged: dict[str, Fix] = {}
    by_subject: dict[str, str] = {}
    for fix in (f for f in fixes if f.decision == "kept"):
        bare = CVE_SUFFIX.sub("", fix.subject)
        key = by_subject.get(bare) or fix.patch or bare
        by_subject.setdefault(bare, key)
        if key in merged:
            first = merged[key]
            merged[key] = Fix(first.subject, first.decision, first.commit or fix.commit, first.patch or fix.patch,
                              first.why, (*first.also_named, fix.subject))
        else:
            merged[key] = fix
    return list(merged.values())


def unclassified(named: dict[str, list[str]], fixes: list[Fix]) -> list[str]:
    """The path subjects the changelogs name that fixes.tsv has no row for."""
    known = {f.subject for f in fixes}
    return sorted(s for s in named if s not in known)


def record_of(fix: Fix, result: MutantResult | None, debian: list[str], config: str = "",
              programs: str = "") -> HistoryRecord:
    """A kept fix's record: caught when validate-patch reported its bug as a mutant kill; `result` None: the
    fix was not re-created (no patch), or its patch was not judged yet."""
    if result is None:
        return HistoryRecord(fix.title, fix.commit, fix.patch, "not-judged" if fix.patch else "not-re-created",
                             why=fix.why, debian=debian)
    verdict = {"detected": "caught", "survived": "missed", "build failed": "build-failed",
               "boot failed": "boot-failed", "equivalent": "not-re-created"}[result.verdict]
    error = (f"{SAME_CODE}: the patch changes no code this config builds" if result.same_code
             else result.build_error or result.boot_error or "")
    return HistoryRecord(fix.title, fix.commit, fix.patch, verdict, [str(c) for c in result.detected_by],
                         fix.why + (f" ({error})" if error else ""), debian, config, programs)


def _fixes(n: int) -> str:
    return f"{n} fix" if n == 1 else f"{n} fixes"


def render(records: list[HistoryRecord], fixes: list[Fix], named: dict[str, list[str]],
           sources: list[str], seconds: float | None = None) -> str:
    """Markdown: the figure and its population, one row per kept fix, then the missed and the left out."""
    counts = Counter(r.verdict for r in records)
    judged = counts["caught"] + counts["missed"]
    share = f"{100 * counts['caught'] / judged:.1f}%" if judged else "n/a"
    kept = [f for f in fixes if f.decision == "kept"]
    left = [f for f in fixes if f.decision == "left-out"]
    read_in = [f for f in fixes if f.subject not in named]  # rows found by reading, outside the subject words
    lines = ["# The kernel's history as a score", "",
             f"**{counts['caught']} of {judged} re-created bugs reported by validate-patch ({share})**; "
             + ", ".join(f"{counts[v]} {v}" for v in VERDICTS if counts[v])
             + (f"; this run {seconds:.0f} s" if seconds is not None else "")
             + ("; PARTIAL: some re-created bugs are not judged yet" if counts["not-judged"] else ""), "",
             f"Population: every subject in the path ({PATH_SUBJECT.pattern}) that Debian's changelogs of "
             + ", ".join(sources) + f" name: {len(named)} subjects, and {len(read_in)} more found by reading "
             f"those changelogs; bench/history/fixes.tsv classifies them as {len(kept)} kept (a program can observe "
             f"the bug) and {len(left)} left out: {len(records)} kept bugs (rows naming one bug twice, as its subject "
             f"and again with its CVE, are one), {sum(bool(r.patch) for r in records)} of them re-created as "
             "patches on Debian's linux-source-6.12 and judged as a mutant is (both boots good, a change in every "
             "run or seen again in a second boot). No sampling: every re-created bug is judged.", "",
             "| fix | commit | Debian | verdict | reported as |", "|---|---|---|---|---|"]
    for r in records:
        shown = "; ".join(r.caught_by) or r.why
        lines.append(f"| {r.subject} | {r.commit or '(not confirmed)'} | {', '.join(r.debian) or '-'} | "
                     f"{r.verdict} | {shown} |")
    configs = Counter(r.config for r in records if r.config)
    if configs:
        lines += ["", "Kernels judged on: " + "; ".join(f"{c} ({_fixes(n)})" for c, n in configs.most_common())
                  + ". A bug only a lockdep, KASAN or PROVE_RCU kernel reports is missed on a kernel without them."]
    programs = Counter(r.programs or "not recorded (judged before the score kept it)" for r in records if r.config)
    if programs:
        lines += ["", "Judged by the reproducers of sigwake " + "; ".join(f"{p} ({_fixes(n)})"
                                                                        for p, n in programs.most_common())
                  + ": a case changed since its record was judged is judged again with `--fix`."]
    missed = [r for r in records if r.verdict != "caught"]
    if missed:
        lines += ["", "## Not caught, and what would catch them", ""]
        lines += [f"- {r.subject} ({r.verdict}): {r.why}" for r in missed]
    reasons = Counter(f.why for f in left)
    lines += ["", "## Left out", ""] + [f"- {why}: {n}" for why, n in reasons.most_common()]
    return "\n".join(lines) + "\n"


def write_score(results_dir: Path, records: list[HistoryRecord], markdown: str,
                seconds: float | None = None) -> list[Path]:
    """results/history/score.json (every record) and score.md."""
    folder = results_dir / "history"
    data = {"schema": CURRENT["history-score"], "seconds": seconds, "fixes": to_data(records)}
    return [write_checked(folder / "score.json", "history-score", data), atomic_write(folder / "score.md", markdown)]
