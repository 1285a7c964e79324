"""The one judgement, row by row (judgement.py's table), and what it adds up to: the findings every report
and command shows, the summary's last line, and the exit code a gate reads."""

from __future__ import annotations

import hashlib

import pytest

from sigwake.programs.catalogue import Catalogue
from sigwake.judge.gate import Gate
from sigwake.judge.judgement import Outcome, findings, judge
from sigwake.core.model import BootRecord, KernelResult, Origin, ReproResult, Runner, Splat
from sigwake.reports.render_summary import render_summary
from sigwake.core.verdicts import Verdict

D, N, U = Verdict.DELIVERED, Verdict.NOT_DELIVERED, Verdict.UNSUPPORTED
WARN = Splat("warning", "WARNING in perf_event_wakeup", 40, "WARNING: ...", privilege="root", case="watermark_sigio",
             tainted_before="0", tainted_after="512")
CRASH = Splat("bug", "PANIC: double fault in alloc_pid", 90, "...", fatal=True,
              privilege="user-paranoid1", case="set_output_sigio_fasync_on_source")


def kernel(release: str, cases: list[ReproResult], boot: BootRecord | None = None,
           splats: list[Splat] | None = None, cpus: int = 1) -> KernelResult:
    return KernelResult(release, release, Origin("debian", f"linux-image-{release}", "1", "trixie",
                                                 sha256=hashlib.sha256(release.encode()).hexdigest()),
                        Runner("qemu", 5, cpus=cpus), boot or BootRecord("ok", 10.0, 900), cases, "2026-11-30T00:00:00+00:00",
                        "abc", splats=splats or [])


def case(name: str, verdict: Verdict, privilege: str = "root", runs: dict[str, int] | None = None) -> ReproResult:
    return ReproResult(name, verdict, "perf_event_open: EACCES" if verdict is U else "", {}, 1.0, privilege,
                       runs or {str(verdict): 5})


def needs_two(counted: int) -> ReproResult:
    """inherit_time_other_cpu (facts: cpus 2) refused, having counted `counted` CPUs it may run on."""
    return ReproResult("inherit_time_other_cpu", U, "one CPU we may run on", {"cpus": counted}, 1.0, "root", {"unsupported": 5})


@pytest.mark.parametrize("k, c, outcome, finding, why", [
    # a WARNING while a case ran fails it though its verdict was right
    (kernel("6.12.118+deb13-amd64", [case("watermark_sigio", D)], splats=[WARN]), "watermark_sigio",
     Outcome.FAIL, "splat", "kernel splat while it ran: WARNING in perf_event_wakeup (verdict delivered)"),
    # a kernel that suddenly refuses the event where delivered is known: a failure, never a skip
    (kernel("6.12.118+deb13-amd64", [case("watermark_sigio", U)]), "watermark_sigio",
     Outcome.FAIL, "refusal", "refusal: unsupported (perf_event_open: EACCES), where delivered is known"),
    # a case that needs two CPUs, refused on a boot of one, having counted one: the machine's doing, a skip
    (kernel("6.12.118+deb13-amd64", [needs_two(1)]), "inherit_time_other_cpu",
     Outcome.SKIP, None, "needs 2 CPUs and ran on 1 (--cpus 2): one CPU we may run on"),
    # ... but where it counted two on that boot, the refusal is the kernel's
    (kernel("6.12.118+deb13-amd64", [needs_two(2)]), "inherit_time_other_cpu",
     Outcome.FAIL, "refusal", "refusal: unsupported (one CPU we may run on), where measured is known"),
    # ... as on a boot of two, and on a run whose vCPUs are not known (0: older records, some targets)
    (kernel("6.12.118+deb13-amd64", [needs_two(1)], cpus=2), "inherit_time_other_cpu",
     Outcome.FAIL, "refusal", "where measured is known"),
    (kernel("6.12.118+deb13-amd64", [needs_two(1)], cpus=0), "inherit_time_other_cpu",
     Outcome.FAIL, "refusal", "where measured is known"),
    # a refusal that is the known behaviour stays a skip (Debian's paranoid 3)
    (kernel("6.12.118+deb13-amd64", [case("watermark_sigio", U, "user-paranoid3")]), "watermark_sigio",
     Outcome.SKIP, None, "perf_event_open: EACCES"),
    # the signal lost in 2 runs of 5 where delivered is known
    (kernel("6.12.118+deb13-amd64", [case("watermark_sigio", Verdict.FLAKY, runs={"delivered": 3,
                                                                                  "not-delivered": 2})]),
     "watermark_sigio", Outcome.FAIL, "intermittent", "intermittent 2/5: not-delivered x2 in 2 of 5 runs, expected "
                                                      "delivered"),
    # on a kernel before the fix, a run that delivers is as much a split
    (kernel("6.1.0-57-amd64", [case("watermark_sigio", Verdict.FLAKY, runs={"not-delivered": 4, "delivered": 1})]),
     "watermark_sigio", Outcome.FAIL, "intermittent", "intermittent 1/5: delivered x1"),
    # nothing known of the case: a split is still intermittent, against its most common verdict
    (kernel("6.12.118+deb13-amd64", [case("a_case_no_table_knows", Verdict.FLAKY, runs={"delivered": 4,
                                                                                        "error": 1})]),
     "a_case_no_table_knows", Outcome.FAIL, "intermittent", "intermittent 1/5: error x1"),
    # a case the crash cut off is lost: a finding, as the kernel's crash is
    (kernel("6.12.95+deb12-cloud-amd64", [case("watermark_sigio", Verdict.BOOT_FAILED)],
            BootRecord("boot-failed", 6.7, 2070, "Kernel panic - not syncing"), [CRASH]),
     "watermark_sigio", Outcome.MISS, "lost", "boot-failed"),
    # a boot QEMU refused before the kernel ran anything: not tested, not a finding of the kernel
    (kernel("7.0.1-amd64", [case("watermark_sigio", Verdict.BOOT_FAILED)],
            BootRecord("boot-failed", 0.1, None, "QEMU exited with 1 before the init reported")),
     "watermark_sigio", Outcome.MISS, None, "boot-failed"),
    (kernel("6.12.118+deb13-amd64", [case("watermark_sigio", D)]), "watermark_sigio", Outcome.PASS, None, ""),
    (kernel("6.1.0-57-amd64", [case("watermark_sigio", N)]), "watermark_sigio", Outcome.XFAIL, None, "fd20bb51ed39"),
])
def test_each_row_of_the_judgement(k: KernelResult, c: str, outcome: Outcome, finding: str | None, why: str, catalogue: Catalogue) -> None:
    judged = judge(k, next(r for r in k.reproducers if r.name == c), catalogue)
    assert (judged.outcome, judged.finding) == (outcome, finding), judged.why
    assert why in judged.why


def test_a_report_under_no_cases_name_is_the_kernels_own_finding(catalogue: Catalogue) -> None:
    # A program run whole (its cases could not be listed) gives its name to a report in its run: where that is
    # no case of the kernel's, no case shows the report, and the kernel's own findings must.
    whole = Splat("warning", "WARNING in perf_fasync", 40, "WARNING: ...", privilege="root", case="owner_gone")
    between = Splat("warning", "WARNING in perf_fasync", 60, "WARNING: ...", place="between [root] a and [root] b")
    k = kernel("6.12.118+deb13-amd64", [case("watermark_sigio", D)], splats=[whole, between])
    assert [(f.kind, f.text) for f in findings([k], catalogue)] == [
        ("splat", "WARNING in perf_fasync ([root] owner_gone)"),
        ("splat", "WARNING in perf_fasync (between [root] a and [root] b)")]


def test_a_crash_is_a_finding_of_the_kernel_and_the_last_line_is_never_none(catalogue: Catalogue) -> None:
    crashed = kernel("6.12.95+deb12-cloud-amd64", [case("watermark_sigio", D, "root"),
                                                   case("set_output_sigio_fasync_on_source", Verdict.BOOT_FAILED,
                                                        "user-paranoid1")],
                     BootRecord("boot-failed", 6.7, 2070, "Kernel panic - not syncing"), [CRASH])
    found = findings([crashed], catalogue)
    assert [f.kind for f in found] == ["crash", "splat"]  # the crash ended the boot; the case it hit failed
    summary = render_summary([crashed], catalogue)
    assert summary.splitlines()[-1] == "findings: 2 (1 splat, 1 crash)"
    assert summary.splitlines()[0].startswith("finding: 6.12.95+deb12-cloud-amd64: crash: the boot ended in PANIC")
    assert Gate().last_line() == "findings: none"


def test_a_crash_known_to_follow_the_emulator_says_so_under_that_emulator_only(catalogue: Catalogue) -> None:
    crashed = BootRecord("boot-failed", 9.0, 900, "Kernel panic")
    cut = ReproResult("set_output_sigio_fasync_on_source", Verdict.BOOT_FAILED, "was running when the boot ended", {},
                      1.0, "user-paranoid1", {"boot-failed": 1})
    for machine, follows in (("QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)", True),
                             ("QEMU emulator version 10.0.2 (Debian 1:10.0.2+ds-2+deb13u1~bpo12+1)", False)):
        subject = kernel("6.12.95+deb12-cloud-amd64", [cut], crashed, [CRASH])
        subject.runner = Runner("qemu", 5, machine=machine, accel="tcg")
        said = " ".join(f.text for f in findings([subject], catalogue) if f.kind in ("crash", "splat"))
        assert "PANIC: double fault in alloc_pid" in said
        assert ("[follows the emulator:" in said) is follows, said
