"""The host kernel, natively: each case's verdict against the expectations table."""

from __future__ import annotations

import os

from sigwake import expectations
from sigwake.binaries import Binaries
from sigwake.native import run_all
from sigwake.verdicts import Verdict


def test_host_verdicts_match_what_is_known_of_its_version(built: Binaries) -> None:
    release = os.uname().release
    results = run_all(built, timeout_s=10, repeat=3)
    assert len(results) >= len(built.reproducers)  # a program may hold several cases
    for r in results:
        assert r.verdict.is_kernel_verdict, f"{r.name}: {r.verdict} {r.reason}"
        assert sum(r.runs.values()) == 3
        mismatch = expectations.check("host", release, r.name, r.verdict, r.evidence, r.privilege, "host")
        assert mismatch is None, str(mismatch)


def test_every_result_carries_its_kernel_path_or_why_not(built: Binaries) -> None:
    for r in run_all(built, timeout_s=10, tracer=built.kernel_path):
        assert {"perf_event_wakeup", "kill_fasync", "send_sigio"} <= set(r.kernel_path), (r.name, r.kernel_path)
        for function, value in r.kernel_path.items():
            assert value.isdigit() or value.startswith("unavailable: "), (r.name, function, value)


def test_the_evidence_triad_is_reported(built: Binaries) -> None:
    by_name = {r.name: r for r in run_all(built, timeout_s=10)}
    sigio = by_name["watermark_sigio"]
    assert {"records", "record_types", "pollin", "signals", "decided_after_us"} <= set(sigio.evidence)
    assert sigio.evidence["pollin"] == "1"
    if sigio.verdict is Verdict.DELIVERED:
        assert sigio.evidence["si_code"] == "1" and sigio.evidence["signal_tid"].isdigit()
