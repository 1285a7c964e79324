"""The KTAP the reproducers and the guest init print, read back."""

from sigwake.parse.outcome import case_verdicts, judged, run_problem
from sigwake.parse.ktap import parse_runner, parse_program, parse_result
from sigwake.core.verdicts import Verdict

NOT_DELIVERED = """KTAP version 1
1..1
# records=3
# pollin=1
# signals=0
# verdict=not-delivered
# reason=record written and POLLIN reported, no SIGIO within the grace
not ok 1 watermark_sigio""".splitlines()

TWO_CASES = """KTAP version 1
1..2
# signal_tid=41
# verdict=delivered
ok 1 setown_ex_tid_overflow
# signal_tid=40
# verdict=not-delivered
# reason=wrong thread
not ok 2 setown_ex_tid_watermark""".splitlines()


def test_result_lines_with_and_without_directives() -> None:
    r = parse_result("ok 3 watermark_poll # SKIP perf_event_open: EINVAL")
    assert r is not None and r.ok and r.number == 3 and r.name == "watermark_poll"
    assert (r.directive, r.why) == ("SKIP", "perf_event_open: EINVAL")
    r = parse_result("not ok 1 x")
    assert r is not None and not r.ok and r.directive is None
    assert parse_result("okay 1 x") is None


def test_a_case_gives_verdict_reason_and_evidence() -> None:
    (case,) = case_verdicts(parse_program(NOT_DELIVERED))
    assert case == ("watermark_sigio", Verdict.NOT_DELIVERED,
                    "record written and POLLIN reported, no SIGIO within the grace",
                    {"records": 3, "pollin": 1, "signals": 0})


def test_each_case_keeps_its_own_evidence() -> None:
    first, second = case_verdicts(parse_program(TWO_CASES))
    assert first == ("setown_ex_tid_overflow", Verdict.DELIVERED, "", {"signal_tid": 41})
    assert second == ("setown_ex_tid_watermark", Verdict.NOT_DELIVERED, "wrong thread", {"signal_tid": 40})


def test_a_measurement_is_ok() -> None:
    lines = ["KTAP version 1", "1..1", "# buffers=129", "# verdict=measured", "ok 1 memlock_budget"]
    assert case_verdicts(parse_program(lines)) == [("memlock_budget", Verdict.MEASURED, "", {"buffers": 129})]


def test_result_line_that_contradicts_the_verdict_is_an_error() -> None:
    lines = NOT_DELIVERED[:-1] + ["ok 1 watermark_sigio"]
    (_, verdict, reason, _), = case_verdicts(parse_program(lines))
    assert verdict is Verdict.ERROR and "contradicts" in reason


def test_flawed_documents_make_every_case_an_error() -> None:
    for lines, why in [
        (NOT_DELIVERED[1:], "no KTAP header"),
        (TWO_CASES[:-3], "planned 2 cases, reported 1"),
        (TWO_CASES[:2] + TWO_CASES[2:5] * 2, "a case reported twice"),
    ]:
        cases = case_verdicts(parse_program(lines))
        assert cases and all(v is Verdict.ERROR and why in r for _, v, r, _ in cases), (why, cases)
    no_verdict = [line for line in NOT_DELIVERED if not line.startswith("# verdict")]
    assert case_verdicts(parse_program(no_verdict))[0][1:3] == (Verdict.ERROR, "no verdict line")
    assert case_verdicts(parse_program(["KTAP version 1", "1..1", "# verdict=maybe", "ok 1 x"]))[0][1] is Verdict.ERROR


def guest(*runs: list[str], done: int | None = None, header: list[str] | None = None) -> list[str]:
    lines = header or ["KTAP version 1", "# sigwake.release=6.1.0-57-amd64", "# sigwake.init_uptime_ms=1350"]
    lines = [*lines, f"1..{len(runs)}"]
    for run in runs:
        lines += run
    lines.append(f"# sigwake.done={len(runs) if done is None else done}")
    return lines


def run_of(name: str, number: int, body: list[str], result: str, privilege: str = "root") -> list[str]:
    """A run as the guest reports it; its result line gets the name the case loop gives it."""
    exit_line = [] if "# ERROR" in result or "# TIMEOUT" in result else [f"# sigwake.exit={0 if result.startswith('ok') else 1}"]
    named = result.replace(f" {number} {name}", f" {number} {name} [{privilege} run 1]", 1)
    return [f"# sigwake.start={name}", *("    " + b for b in body), "# sigwake.duration_us=1500", "# sigwake.cpu_us=400",
            *exit_line, named]


def test_guest_report_nests_each_run() -> None:
    report = parse_runner(guest(
        run_of("watermark_sigio", 1, NOT_DELIVERED, "not ok 1 watermark_sigio"),
        run_of("hang", 2, [], "not ok 2 hang # TIMEOUT killed at the deadline"),
        run_of("crash", 3, ["KTAP version 1"], "not ok 3 crash # ERROR killed by signal 11"),
    ))
    assert report.release == "6.1.0-57-amd64" and report.init_uptime_ms == 1350 and report.done
    first, hang, crash = report.runs
    assert run_problem(first) is None and (first.duration_us, first.cpu_us) == (1500, 400)
    assert case_verdicts(first.document)[0][1] is Verdict.NOT_DELIVERED
    assert run_problem(hang) == (Verdict.TIMEOUT, "killed by the guest at its deadline: killed at the deadline")
    assert run_problem(crash) is None and crash.exit_code is None
    ((_, verdict, reason, _),) = judged(crash.document, "crash", crash.ended(), crash.exit_code)
    assert verdict is Verdict.ERROR and reason.endswith("ended: killed by signal 11")


def test_privilege_passes_label_their_runs() -> None:
    header = ["KTAP version 1", "# sigwake.pass=root", "# sigwake.paranoid=3"]
    body = run_of("watermark_sigio", 1, NOT_DELIVERED, "not ok 1 watermark_sigio")
    lines = guest(body, run_of("watermark_sigio", 1, NOT_DELIVERED, "not ok 1 watermark_sigio", "user-paranoid1"),
                  header=header)
    second_pass = lines.index(body[0], lines.index(body[-1]))
    lines[second_pass:second_pass] = ["# sigwake.pass=user-paranoid1", "# sigwake.paranoid=1"]
    report = parse_runner(lines)
    assert [r.privilege for r in report.runs] == ["root", "user-paranoid1"]
    assert report.paranoid == {"root": "3", "user-paranoid1": "1"}


def test_a_reproducer_cannot_print_a_top_level_result() -> None:
    forged = NOT_DELIVERED + ["ok 1 watermark_sigio", "# sigwake.done=1"]
    report = parse_runner(guest(run_of("watermark_sigio", 1, forged, "not ok 1 watermark_sigio")))
    # Its lines stay inside its subtest: a second result line there is a flaw, never a pass.
    assert {v for _, v, _, _ in case_verdicts(report.runs[0].document)} == {Verdict.ERROR}


def test_done_needs_every_planned_run() -> None:
    report = parse_runner(guest(run_of("a", 1, NOT_DELIVERED, "not ok 1 a"), done=2))
    assert not report.done


def test_the_guests_warnings_are_kept() -> None:
    report = parse_runner(["KTAP version 1", "# sigwake.warning=unknown pass user-paranoid9", "1..0",
                          "# sigwake.done=0"])
    assert report.warnings == ["unknown pass user-paranoid9"] and report.done
