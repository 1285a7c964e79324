"""Known kernel behaviour, with its source: each case's own (its facts, read into
the catalogue) after what is known of whole kernels. These are facts about
kernels that the measured verdicts are compared against; they never decide a
verdict."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..programs.catalogue import Catalogue, Expectation, Version
from ..core.model import Evidence
from ..core.verdicts import Verdict

HEADLINE = "watermark_sigio"  # rr's case, as root: the verdict each kernel's summary line, the page and QA show

# What is known of whole kernels for every case that opens perf events (it needs CONFIG_PERF_EVENTS): checked
# before a case's own facts.
KERNEL_WIDE: tuple[Expectation, ...] = (
    Expectation(
        Verdict.UNSUPPORTED, Verdict.UNSUPPORTED, None,
        "Debian's kernels carry the security-perf-allow-further-restriction patch: at perf_event_paranoid 3 "
        "(Debian's default) perf_event_open() refuses every user without CAP_PERFMON/CAP_SYS_ADMIN (EACCES)",
        privileges=("user-paranoid3",), origins=("debian",),
    ),
)


def rows(catalogue: Catalogue, repro: str) -> tuple[Expectation, ...]:
    """What is known for `repro`, in the order it decides: the first that applies."""
    facts = catalogue.facts(repro)
    if facts is None:
        return KERNEL_WIDE
    return (KERNEL_WIDE if facts.opens_perf_events else ()) + facts.expected


def upstream_version(release: str) -> Version | None:
    """The upstream major.minor in a `uname -r` (Debian's 6.1.0-57-amd64 is 6.1)."""
    match = re.match(r"(\d+)\.(\d+)", release)
    return (int(match[1]), int(match[2])) if match else None


def stable_patch(release: str) -> int | None:
    """The stable patch level in a release (6.18.44-fc is 44), None where it does not say: Debian's ABI
    names (6.1.0-57-amd64) keep 0 there whatever the patch level."""
    match = re.match(r"\d+\.\d+\.(\d+)", release)
    if match is None or re.match(r"\d+\.\d+\.0-\d+", release):
        return None
    return int(match[1])


def facts_release(release: str, version: str) -> str:
    """The release the facts are read against: Debian's package version in `uname -v` ("Debian 6.1.192-3")
    names the stable patch level its `uname -r` (6.1.0-57-amd64) does not."""
    match = re.search(r"Debian (\d+\.\d+\.\d+)", version)
    return match[1] if match and upstream_version(match[1]) == upstream_version(release) else release


def _backported(row: Expectation, release: str) -> bool | None:
    """Whether a kernel of `release` is at or past the stable release `row` names for its branch; False when
    it names none, None where the release does not say its patch level."""
    version = upstream_version(release)
    branch = [r for r in row.stable if r[:2] == version]
    if not branch:
        return False
    patch = stable_patch(release)
    return None if patch is None else patch >= branch[0][2]


def _changed(row: Expectation, release: str) -> bool | None:
    """Whether a kernel of `release` has the change `row` speaks of; None where that cannot be told."""
    version = upstream_version(release)
    if version is None or row.since is None:
        return None
    return True if version >= row.since else _backported(row, release)


@dataclass(frozen=True)
class Expected:
    verdict: Verdict
    source: str
    fixed: Verdict | None = None  # a kernel before the change: the verdict the change brings
    bug: Verdict | None = None  # a fix no known release dates (facts' fixed_by()) this kernel is not known
    # to carry: the verdict of its bug, which makes it a "missing fix"


def expected(catalogue: Catalogue, repro: str, release: str, privilege: str = "root",
             origin: str = "debian") -> Expected | None:
    for row in rows(catalogue, repro):
        if row.applies(privilege, origin):
            if row.since is None:  # the same everywhere, or a fix known only from the stable releases it is in
                # At or past a backport, the bug back is a regression, not a fix the kernel never had.
                missing = row.before is not row.after and _backported(row, release) is not True
                return Expected(row.after, row.source, bug=row.before if missing else None)
            changed = _changed(row, release)
            if changed is None:
                return None
            return Expected(row.after, row.source) if changed else Expected(row.before, row.source, row.after)
    return None


def applying(catalogue: Catalogue, repro: str, privilege: str = "root", origin: str = "file") -> Expectation | None:
    """The row of what is known that speaks of this pass and origin (the narrower first)."""
    return next((row for row in rows(catalogue, repro) if row.applies(privilege, origin)), None)


def correct(catalogue: Catalogue, repro: str, privilege: str = "root", origin: str = "file") -> Verdict | None:
    """The behaviour of a kernel with every known fix: what a patch should leave or make true."""
    row = applying(catalogue, repro, privilege, origin)
    return row.after if row is not None else None


@dataclass(frozen=True)
class Mismatch:
    kernel: str
    repro: str
    privilege: str
    kind: str  # "unexpected fix", "missing fix", "regression" or "mismatch"
    measured: Verdict
    expected: Verdict
    evidence: Evidence
    source: str

    def __str__(self) -> str:
        shown = " ".join(f"{k}={v}" for k, v in self.evidence.items())
        return (f"{self.kernel}: {self.repro} as {self.privilege} {self.kind}: measured {self.measured}, expected {self.expected} "
                f"[{shown}] (expected from: {self.source})")


def classify(measured: Verdict, wanted: Verdict) -> str:
    if wanted is Verdict.NOT_DELIVERED and measured is Verdict.DELIVERED:
        return "unexpected fix"
    if (wanted in (Verdict.DELIVERED, Verdict.MEASURED, Verdict.NO_WAKEUP) and measured.is_kernel_verdict
            and measured is not Verdict.UNSUPPORTED):
        return "regression"
    return "mismatch"


def check(catalogue: Catalogue, kernel: str, release: str, repro: str, measured: Verdict, evidence: Evidence,
          privilege: str = "root", origin: str = "debian") -> Mismatch | None:
    """None when the measured verdict is the known behaviour (or nothing is known)."""
    want = expected(catalogue, repro, release, privilege, origin)
    if want is None or want.verdict is measured:
        return None
    kind = ("unexpected fix" if measured is want.fixed else "missing fix" if measured is want.bug
            else classify(measured, want.verdict))
    return Mismatch(kernel, repro, privilege, kind, measured, want.verdict, evidence, want.source)
