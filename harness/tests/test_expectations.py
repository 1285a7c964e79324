"""What is known of kernels, case by case from the catalogue and of whole kernels, and how a difference is named."""

from sigwake.programs.catalogue import Catalogue
from sigwake.judge import expectations
from sigwake.core.verdicts import Verdict


def test_upstream_version_from_uname_releases() -> None:
    assert expectations.upstream_version("6.1.0-57-amd64") == (6, 1)
    assert expectations.upstream_version("6.12.118+deb13-amd64") == (6, 12)
    assert expectations.upstream_version("7.2.13+deb14-amd64") == (7, 2)
    assert expectations.upstream_version("weird") is None


def test_watermark_sigio_changes_at_6_10(catalogue: Catalogue) -> None:
    assert expectations.expected(catalogue, "watermark_sigio", "6.9.12").verdict is Verdict.NOT_DELIVERED
    assert expectations.expected(catalogue, "watermark_sigio", "6.10.0").verdict is Verdict.DELIVERED
    assert expectations.expected(catalogue, "watermark_sigio", "6.1.0-57-amd64").verdict is Verdict.NOT_DELIVERED
    assert "fd20bb51ed39" in expectations.expected(catalogue, "watermark_sigio", "6.1.0").source


def test_controls_are_delivered_everywhere(catalogue: Catalogue) -> None:
    for release in ("4.19.0", "6.1.0", "7.2.13"):
        assert expectations.expected(catalogue, "watermark_poll", release).verdict is Verdict.DELIVERED
        assert expectations.expected(catalogue, "overflow_sigio", release).verdict is Verdict.DELIVERED


def test_unknown_reproducer_has_no_expectation(catalogue: Catalogue) -> None:
    assert expectations.expected(catalogue, "nonexistent", "6.1.0") is None
    assert expectations.check(catalogue, "k", "6.1.0", "nonexistent", Verdict.ERROR, {}) is None


def test_a_backported_fix_is_an_unexpected_fix_not_a_regression(catalogue: Catalogue) -> None:
    m = expectations.check(catalogue, "6.1.0-57-amd64", "6.1.0-57-amd64", "watermark_sigio", Verdict.DELIVERED, {"signals": 1})
    assert m is not None and m.kind == "unexpected fix"
    assert "6.1.0-57-amd64" in str(m) and "signals=1" in str(m)


def test_a_lost_signal_on_a_fixed_kernel_is_a_regression(catalogue: Catalogue) -> None:
    m = expectations.check(catalogue, "7.2", "7.2.13", "watermark_sigio", Verdict.NOT_DELIVERED, {"signals": 0})
    assert m is not None and m.kind == "regression"
    m = expectations.check(catalogue, "7.2", "7.2.13", "overflow_sigio", Verdict.ERROR, {})
    assert m is not None and m.kind == "mismatch"
    assert expectations.check(catalogue, "7.2", "7.2.13", "watermark_sigio", Verdict.DELIVERED, {}) is None


def test_debian_refuses_unprivileged_perf_at_paranoid_3(catalogue: Catalogue) -> None:
    want = expectations.expected(catalogue, "watermark_sigio", "7.2.13", "user-paranoid3", "debian")
    assert want is not None and want.verdict is Verdict.UNSUPPORTED and "Debian" in want.source
    # Not a fact about other kernels, nor about other passes.
    assert expectations.expected(catalogue, "watermark_sigio", "7.2.13", "user-paranoid3", "file").verdict is Verdict.DELIVERED
    # a case that opens no perf event (a socket's urgent data) is not refused by perf's paranoia
    assert expectations.expected(catalogue, "urgent_sigurg_pgrp", "7.2.13", "user-paranoid3", "debian").verdict \
        is Verdict.DELIVERED
    assert expectations.expected(catalogue, "watermark_sigio", "6.1.0", "user-paranoid2", "debian").verdict is Verdict.NOT_DELIVERED


def test_a_stable_backport_counts_from_its_stable_release(catalogue: Catalogue) -> None:
    # c418d8b4d7a4 (v6.19) reached 6.18.2 and 6.17.13; 6.12 has no backport, whatever its patch level.
    def known(release: str) -> Verdict | None:
        want = expectations.expected(catalogue, "exit_read_record", release)
        return want.verdict if want else None
    assert known("6.19.0") is Verdict.MEASURED
    assert known("6.18.44-fc-v1098") is Verdict.MEASURED
    assert known("6.18.2") is Verdict.MEASURED
    assert known("6.18.1") is Verdict.NO_RECORD
    assert known("6.17.12") is Verdict.NO_RECORD
    assert known("6.17.13") is Verdict.MEASURED
    assert known("6.12.118+deb13-amd64") is Verdict.NO_RECORD
    assert known("6.1.0-57-amd64") is Verdict.NO_RECORD
    # A branch with a backport, and a release that does not say its patch level: nothing is known.
    assert known("6.18.0-1-amd64") is None


def test_the_facts_read_debians_stable_patch_level_from_uname_v() -> None:
    assert expectations.facts_release("6.1.0-57-amd64", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3 (2026-11-02)") == "6.1.192"
    assert expectations.facts_release("6.18.44-fc-v1098", "#1 SMP PREEMPT_DYNAMIC @0") == "6.18.44-fc-v1098"
    # Another branch's version in uname -v (a backport's build) is not this kernel's.
    assert expectations.facts_release("6.12.0-1-amd64", "#1 SMP Debian 6.1.192-3") == "6.12.0-1-amd64"


def test_a_kernel_before_the_change_behaving_as_after_is_an_unexpected_fix(catalogue: Catalogue) -> None:
    m = expectations.check(catalogue, "6.12", "6.12.118+deb13-amd64", "exit_read_record", Verdict.MEASURED, {})
    assert m is not None and m.kind == "unexpected fix"
    m = expectations.check(catalogue, "6.18", "6.18.44", "exit_read_record", Verdict.NO_RECORD, {})
    assert m is not None and m.kind == "regression"


def test_a_kernel_showing_the_bug_of_a_fix_no_release_dates_lacks_that_fix(catalogue: Catalogue) -> None:
    # "Don't send SIGTRAP after exec removed the event": known only from stable 6.12.118. Every kernel is held to
    # the fix; one whose new image is killed by SIGTRAP lacks it, whichever branch it is on.
    for release in ("6.1.192", "6.12.95", "7.2.13"):
        m = expectations.check(catalogue, release, release, "sigtrap_exec_fault", Verdict.MISDELIVERED, {})
        assert m is not None and m.kind == "missing fix" and "6.12.118" in m.source
    assert expectations.check(catalogue, "6.12.118", "6.12.118", "sigtrap_exec_fault", Verdict.DELIVERED, {}) is None
    # A kernel at or past a stable release that carries the fix, showing its bug, lost it: a regression.
    m = expectations.check(catalogue, "6.12.120", "6.12.120", "sigtrap_exec_fault", Verdict.MISDELIVERED, {})
    assert m is not None and m.kind == "regression"
    # Another wrong verdict is not that bug: a signal not delivered where it must be is still a regression.
    m = expectations.check(catalogue, "7.2.13", "7.2.13", "sigtrap_exec_fault", Verdict.NOT_DELIVERED, {})
    assert m is not None and m.kind == "regression"
