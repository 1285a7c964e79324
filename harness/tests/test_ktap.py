"""The KTAP the reproducers and the guest init print, read back."""

from sigwake.ktap import parse_guest, parse_repro, parse_result
from sigwake.verdicts import Verdict

NOT_DELIVERED = """KTAP version 1
1..1
# records=3
# pollin=1
# signals=0
# verdict=not-delivered
# reason=record written and POLLIN reported, no SIGIO within the grace
not ok 1 watermark_sigio""".splitlines()


def test_result_lines_with_and_without_directives() -> None:
    r = parse_result("ok 3 watermark_poll # SKIP perf_event_open: EINVAL")
    assert r is not None and r.ok and r.number == 3 and r.name == "watermark_poll"
    assert (r.directive, r.why) == ("SKIP", "perf_event_open: EINVAL")
    r = parse_result("not ok 1 x")
    assert r is not None and not r.ok and r.directive is None
    assert parse_result("okay 1 x") is None


def test_repro_document_gives_verdict_and_evidence() -> None:
    doc = parse_repro(NOT_DELIVERED)
    assert doc.decide() == (Verdict.NOT_DELIVERED, "record written and POLLIN reported, no SIGIO within the grace")
    assert doc.evidence == {"records": "3", "pollin": "1", "signals": "0"}


def test_result_line_that_contradicts_the_verdict_is_an_error() -> None:
    lines = NOT_DELIVERED[:-1] + ["ok 1 watermark_sigio"]
    verdict, reason = parse_repro(lines).decide()
    assert verdict is Verdict.ERROR and "contradicts" in reason


def test_missing_header_or_verdict_is_an_error() -> None:
    assert parse_repro(NOT_DELIVERED[1:]).decide()[0] is Verdict.ERROR
    no_verdict = [line for line in NOT_DELIVERED if not line.startswith("# verdict")]
    assert parse_repro(no_verdict).decide() == (Verdict.ERROR, "no verdict line")
    assert parse_repro(["KTAP version 1", "# verdict=maybe", "ok 1 x"]).decide()[0] is Verdict.ERROR


def guest(*runs: list[str], done: int | None = None) -> list[str]:
    lines = ["KTAP version 1", "# sigwake.release=6.1.0-57-amd64", "# sigwake.init_uptime_ms=1350", f"1..{len(runs)}"]
    for run in runs:
        lines += run
    lines.append(f"# sigwake.done={len(runs) if done is None else done}")
    return lines


def run_of(name: str, number: int, body: list[str], result: str) -> list[str]:
    return [f"# sigwake.start={name}", *("    " + b for b in body), "# sigwake.duration_us=1500", result]


def test_guest_report_nests_each_reproducer() -> None:
    report = parse_guest(guest(
        run_of("watermark_sigio", 1, NOT_DELIVERED, "not ok 1 watermark_sigio"),
        run_of("hang", 2, [], "not ok 2 hang # TIMEOUT killed at the deadline"),
        run_of("crash", 3, ["KTAP version 1"], "not ok 3 crash # ERROR killed by signal 11"),
    ))
    assert report.release == "6.1.0-57-amd64" and report.init_uptime_ms == 1350 and report.done
    first, hang, crash = report.runs
    assert first.decide()[0] is Verdict.NOT_DELIVERED and first.duration_us == 1500
    assert hang.decide()[0] is Verdict.TIMEOUT
    assert crash.decide() == (Verdict.ERROR, "the reproducer died: killed by signal 11")


def test_a_reproducer_cannot_print_a_top_level_result() -> None:
    forged = NOT_DELIVERED + ["ok 1 watermark_sigio", "# sigwake.done=1"]
    report = parse_guest(guest(run_of("watermark_sigio", 1, forged, "not ok 1 watermark_sigio")))
    # Its lines stay inside its subtest: two result lines there are an error, never a pass.
    assert report.runs[0].decide()[0] is Verdict.ERROR


def test_done_needs_every_planned_reproducer() -> None:
    report = parse_guest(guest(run_of("a", 1, NOT_DELIVERED, "not ok 1 a"), done=2))
    assert not report.done
