"""How a boot's console becomes verdicts, on synthetic consoles: the cases a real
kernel rarely gives us on demand (torn lines, half reports, QEMU errors)."""

from sigwake.parse.console import frame_line
from sigwake.targets.interpret import interpret
from sigwake.targets.capture import Capture
from sigwake.core.verdicts import Verdict

TOKEN = "c0ffee"
NAMES = ["watermark_poll", "watermark_sigio"]


def console_of(payloads: list[str]) -> str:
    return "".join(frame_line(TOKEN, i, p).replace("\n", "\r\n") for i, p in enumerate(payloads))


def outcome(console: str, exit_code: int | None = 0, timed_out: bool = False, stderr: str = "") -> Capture:
    return Capture(console, exit_code, timed_out, 3.0, stderr)


HEADER = ["KTAP version 1", "# sigwake.release=6.1.0-57-amd64", "# sigwake.init_uptime_ms=1300", "1..2"]
POLL_RUN = ["# sigwake.start=watermark_poll", "    KTAP version 1", "    1..1", "    # pollin=1",
            "    # verdict=delivered", "    ok 1 watermark_poll", "# sigwake.duration_us=20000", "# sigwake.exit=0",
            "ok 1 watermark_poll [root run 1]"]


def test_a_complete_report() -> None:
    sigio = ["# sigwake.start=watermark_sigio", "    KTAP version 1", "    1..1", "    # signals=0",
             "    # verdict=not-delivered", "    not ok 1 watermark_sigio", "# sigwake.duration_us=110000",
             "# sigwake.exit=1", "not ok 2 watermark_sigio [root run 1]"]
    got = interpret(outcome(console_of(HEADER + POLL_RUN + sigio + ["# sigwake.done=2"])), TOKEN, NAMES, ("root",), 60)
    assert got.release == "6.1.0-57-amd64"
    assert got.boot.status == "ok" and got.boot.init_uptime_ms == 1300
    assert [(r.name, r.privilege, r.verdict) for r in got.reproducers] == [
        ("watermark_poll", "root", Verdict.DELIVERED), ("watermark_sigio", "root", Verdict.NOT_DELIVERED)]
    assert got.reproducers[1].evidence == {"signals": 0} and got.reproducers[1].duration_ms == 110.0
    assert got.reproducers[1].runs == {"not-delivered": 1}


def test_a_panic_mid_run_keeps_the_finished_results() -> None:
    console = console_of(HEADER + POLL_RUN + ["# sigwake.start=watermark_sigio", "    KTAP version 1"])
    console += "[    2.1] Kernel panic - not syncing: Fatal exception in interrupt\r\n"
    got = interpret(outcome(console), TOKEN, NAMES, ("root",), 60)
    assert got.boot.status == "boot-failed"
    assert "Fatal exception" in got.boot.detail and "Kernel panic" in got.boot.console_tail
    poll, sigio = got.reproducers
    assert poll.verdict is Verdict.DELIVERED
    assert sigio.verdict is Verdict.BOOT_FAILED and sigio.reason.startswith("was running when the boot ended")


def test_a_hang_is_a_timeout_for_what_did_not_finish() -> None:
    got = interpret(outcome(console_of(HEADER + POLL_RUN), exit_code=None, timed_out=True), TOKEN, NAMES, ("root",), 50)
    assert got.boot.status == "timeout" and "50 s" in got.boot.detail
    assert got.reproducers[0].verdict is Verdict.DELIVERED
    assert got.reproducers[1].verdict is Verdict.TIMEOUT and "never ran" in got.reproducers[1].reason


def test_qemu_refusing_the_image_is_a_boot_failure_with_its_words() -> None:
    got = interpret(outcome("", exit_code=1, stderr="qemu: linux kernel too old to load a ram disk\n"), TOKEN, NAMES, ("root",), 60)
    assert got.boot.status == "boot-failed"
    assert "kernel too old" in got.boot.detail
    assert {r.verdict for r in got.reproducers} == {Verdict.BOOT_FAILED}
    assert got.release is None


def test_a_forged_report_from_another_token_counts_for_nothing() -> None:
    forged = "".join(frame_line("bad", i, p) for i, p in enumerate(HEADER + POLL_RUN + ["# sigwake.done=2"]))
    got = interpret(outcome(forged), TOKEN, NAMES, ("root",), 60)
    assert got.boot.status == "boot-failed" and got.boot.rejected_frames == len(HEADER + POLL_RUN) + 1
    assert {r.verdict for r in got.reproducers} == {Verdict.BOOT_FAILED}


def sigio_run(verdict: str, result: str, run: int = 1) -> list[str]:
    return ["# sigwake.start=watermark_sigio", "    KTAP version 1", "    1..1", f"    # verdict={verdict}",
            f"    {result} 1 watermark_sigio", "# sigwake.duration_us=100000",
            f"# sigwake.exit={0 if result == 'ok' else 1}", f"{result} {run} watermark_sigio [root run {run}]"]


def test_repeated_runs_that_disagree_are_flaky_with_counts() -> None:
    runs = [line for k in range(1, 6) for line in sigio_run(*(("delivered", "ok") if k <= 3 else
                                                              ("not-delivered", "not ok")), k)]
    header = ["KTAP version 1", "# sigwake.release=6.12.1", "1..5"]
    got = interpret(outcome(console_of(header + runs + ["# sigwake.done=5"])), TOKEN, ["watermark_sigio"], ("root",), 60)
    (result,) = got.reproducers
    assert result.verdict is Verdict.FLAKY
    assert result.runs == {"delivered": 3, "not-delivered": 2}
    assert "delivered x3" in result.reason and "not-delivered x2" in result.reason


def test_unanimous_repeats_keep_their_verdict() -> None:
    header = ["KTAP version 1", "# sigwake.release=6.1.0", "1..5"]
    runs = [line for k in range(1, 6) for line in sigio_run("not-delivered", "not ok", k)]
    got = interpret(outcome(console_of(header + runs + ["# sigwake.done=5"])), TOKEN, ["watermark_sigio"], ("root",), 60)
    assert got.reproducers[0].verdict is Verdict.NOT_DELIVERED and got.reproducers[0].runs == {"not-delivered": 5}


def run_with(body: list[str], exit_line: str, result: str) -> list[str]:
    return ["# sigwake.start=watermark_sigio", "# sigwake.case=watermark_sigio", *("    " + b for b in body),
            "# sigwake.duration_us=1000", exit_line, result]


def one_run(run: list[str]) -> Verdict:
    header = ["KTAP version 1", "# sigwake.release=6.12.1", "1..1"]
    got = interpret(outcome(console_of(header + run + ["# sigwake.done=1"])), TOKEN, ["watermark_sigio"], ("root",), 60)
    (result,) = got.reproducers
    assert result.name == "watermark_sigio"
    return result


def test_a_program_that_prints_no_case_is_an_error_with_its_exit_status() -> None:
    silent = one_run(run_with([], "# sigwake.exit=0", "ok 1 watermark_sigio.watermark_sigio [root run 1]"))
    assert silent.verdict is Verdict.ERROR and "reported no case" in silent.reason and "exit 0" in silent.reason
    unknown_case = one_run(run_with([], "# sigwake.exit=2", "not ok 1 watermark_sigio.watermark_sigio [root run 1]"))
    assert unknown_case.verdict is Verdict.ERROR and "exit 2" in unknown_case.reason
    partial = one_run(run_with(["KTAP version 1", "1..2", "# verdict=delivered", "ok 1 watermark_sigio"],
                               "# sigwake.exit=0", "ok 1 watermark_sigio.watermark_sigio [root run 1]"))
    assert partial.verdict is Verdict.ERROR and "planned 2 cases, reported 1" in partial.reason


def test_a_program_must_report_the_case_it_was_asked_for() -> None:
    other = one_run(run_with(["KTAP version 1", "1..1", "# verdict=delivered", "ok 1 watermark_poll [root run 1]"],
                             "# sigwake.exit=0", "ok 1 watermark_sigio.watermark_sigio [root run 1]"))
    assert other.verdict is Verdict.ERROR and "asked for case watermark_sigio" in other.reason


def test_an_exit_status_that_contradicts_the_verdicts_is_an_error() -> None:
    document = ["KTAP version 1", "1..1", "# verdict=delivered", "ok 1 watermark_sigio"]
    liar = one_run(run_with(document, "# sigwake.exit=1", "not ok 1 watermark_sigio.watermark_sigio [root run 1]"))
    assert liar.verdict is Verdict.ERROR and "exit code 1 contradicts" in liar.reason
    honest = one_run(run_with(document, "# sigwake.exit=0", "ok 1 watermark_sigio.watermark_sigio [root run 1]"))
    assert honest.verdict is Verdict.DELIVERED


def test_a_program_killed_after_its_verdict_is_an_error_that_says_so() -> None:
    document = ["KTAP version 1", "1..1", "# verdict=delivered", "ok 1 watermark_sigio"]
    killed = one_run(run_with(document, "# sigwake.duration_us=1", "not ok 1 watermark_sigio.watermark_sigio [root run 1] # ERROR killed by signal 29"))
    assert killed.verdict is Verdict.ERROR and "killed by signal 29" in killed.reason
    assert killed.evidence["ended"] == "killed by signal 29"


def test_a_result_line_for_another_pass_or_run_is_no_result() -> None:
    header = ["KTAP version 1", "# sigwake.release=6.12.1", "1..1"]
    run = sigio_run("delivered", "ok")
    run[-1] = "ok 1 watermark_sigio [user-paranoid1 run 1]"  # the pass in progress is root
    got = interpret(outcome(console_of(header + run + ["# sigwake.done=1"])), TOKEN, ["watermark_sigio"], ("root",), 60)
    (result,) = got.reproducers
    assert result.verdict is Verdict.ERROR and "the run in progress was 'watermark_sigio [root run 1]'" in result.reason


def test_a_case_reported_fewer_times_than_asked_is_an_error() -> None:
    header = ["KTAP version 1", "# sigwake.release=6.12.1", "1..2"]
    runs = sigio_run("delivered", "ok", 1) + sigio_run("delivered", "ok", 2)
    got = interpret(outcome(console_of(header + runs + ["# sigwake.done=2"])), TOKEN, ["watermark_sigio"], ("root",),
                    60, repeat=3)
    (result,) = got.reproducers
    assert result.verdict is Verdict.ERROR and result.reason == "2 runs reported where 3 were asked"
    assert interpret(outcome(console_of(header + runs + ["# sigwake.done=2"])), TOKEN, ["watermark_sigio"],
                     ("root",), 60, repeat=2).reproducers[0].verdict is Verdict.DELIVERED


def test_a_far_ahead_sequence_number_cannot_shut_out_the_frames_after_it() -> None:
    # Were the token known, one frame numbered far ahead would make every genuine frame after it look replayed.
    payloads = HEADER + POLL_RUN + ["# sigwake.done=1"]
    genuine = [frame_line(TOKEN, i, p) for i, p in enumerate(payloads)]
    forged = frame_line(TOKEN, 999999, "ok 1 forged")
    got = interpret(outcome("".join(genuine[:3] + [forged] + genuine[3:])), TOKEN, ["watermark_poll"], ("root",), 60)
    assert got.boot.rejected_frames == 1 and got.reproducers[0].verdict is Verdict.DELIVERED


def test_a_run_that_left_processes_running_counts_for_nothing() -> None:
    # Its daemon could have signalled the cases after it, or itself: the verdict it said is not the kernel's word.
    outlived = POLL_RUN[:-1] + ["# sigwake.strays=1", "not ok 1 watermark_poll [root run 1] # ERROR left 1 processes running"]
    got = interpret(outcome(console_of(HEADER[:-1] + ["1..1"] + outlived + ["# sigwake.done=1"])), TOKEN,
                    ["watermark_poll"], ("root",), 60)
    (poll,) = got.reproducers
    assert poll.verdict is Verdict.ERROR
    assert "left 1 processes running" in poll.reason and "it said delivered" in poll.reason
    assert poll.evidence == {"pollin": 1, "strays": 1}


def test_a_guest_that_could_not_unpack_our_initramfs_is_the_targets_failure() -> None:
    # Seen on arm64 with a 147 MB initramfs in 512 MB: the init ran without its token, every frame "unset".
    console = ("[    0.9] Initramfs unpacking failed: write error\r\n" +
               "".join(frame_line("unset", i, p) for i, p in enumerate(HEADER + POLL_RUN)))
    got = interpret(outcome(console), TOKEN, ["watermark_poll"], ("root",), 60)
    assert got.boot.status == "boot-failed"
    assert got.boot.target_failed.startswith("the guest could not unpack sigwake's initramfs (Initramfs unpacking "
                                             "failed: write error)"), got.boot


def lab_console(runs: list[tuple[str, str]], left_out: int = 0, peer: list[str] | None = None,
                lost: tuple[int, ...] = ()) -> str:
    """A lab's console of watermark_sigio's runs (verdict, result), then `left_out` runs left out and a peer,
    with the frames numbered in `lost` lost on the way."""
    payloads = [line for k, run in enumerate(runs, start=1) for line in sigio_run(*run, k)]
    for k in range(len(runs) + 1, len(runs) + 1 + left_out):
        payloads += [f"# sigwake.unneeded={k}", f"ok {k} watermark_sigio [root run {k}] # SKIP the first runs agreed"]
    payloads += peer or []
    plan = len(runs) + left_out + (1 if peer else 0)
    payloads = ["KTAP version 1", "# sigwake.release=6.12.1", f"1..{plan}"] + payloads + [f"# sigwake.done={plan}"]
    return "".join(f for i, f in enumerate(console_of(payloads).splitlines(keepends=True)) if i not in lost)


def frame_of(run: int, line: int) -> int:
    """The frame of a run's line (sigio_run's: 3 its verdict, 7 its result), after lab_console's 3 header lines."""
    return 3 + (run - 1) * len(sigio_run("delivered", "ok")) + line


def lab(console: str, repeat: int, lossy: bool = True) -> object:
    (result,) = interpret(outcome(console), TOKEN, ["watermark_sigio"], ("root",), 60, repeat=repeat,
                          lossy=lossy).reproducers
    return result


def test_a_lab_run_whose_report_lost_a_frame_is_left_out_when_the_others_show_what_it_said() -> None:
    # Seen in a LAVA lab's log: a printk line spliced into a frame took some of its characters with it. The
    # guest left runs 4 and 5 out, which it does only when every run it ran ended alike.
    ok = ("delivered", "ok")
    result = lab(lab_console([ok, ok, ok], left_out=2, lost=(frame_of(2, 3),)), repeat=5)
    assert result.verdict is Verdict.DELIVERED and result.runs == {"delivered": 2}
    assert "1 of 3 runs left out: its report lost framed lines on the way (frames" in result.reason
    # A lost result line merges two runs: both are left out.
    merged = lab(lab_console([ok, ok, ok], left_out=2, lost=(frame_of(1, 7),)), repeat=5)
    assert merged.verdict is Verdict.DELIVERED and merged.runs == {"delivered": 1} and "2 of 3" in merged.reason


def test_a_lab_run_whose_report_lost_a_frame_is_not_judged_when_it_may_have_differed() -> None:
    ok, bad = ("delivered", "ok"), ("not-delivered", "not ok")
    # Every run ran (they did not all agree, or nothing asked them to): the torn one may be the one that differed.
    for runs in ([ok, bad, ok], [ok, ok, ok]):
        result = lab(lab_console(runs, lost=(frame_of(2, 3),)), repeat=3)
        assert result.verdict is Verdict.ERROR and result.reason.startswith("its report lost framed lines on the way")
        assert "the guest ran all: this one may not have" in result.reason
    # Runs that split without it are a split.
    split = lab(lab_console([ok, ok, bad], lost=(frame_of(2, 3),)), repeat=3)
    assert split.verdict is Verdict.FLAKY and split.runs == {"delivered": 1, "not-delivered": 1}
    # Every run torn: nothing said.
    assert lab(lab_console([ok], lost=(frame_of(1, 3),)), repeat=1).verdict is Verdict.ERROR
    # On a console of our own a lost frame is the guest's doing: the run is the error it reads as, never left out.
    assert lab(lab_console([ok, ok, ok], left_out=2, lost=(frame_of(2, 3),)), repeat=5, lossy=False).verdict \
        is not Verdict.DELIVERED


def test_a_selftest_whose_report_lost_a_frame_is_an_error_not_an_agreement() -> None:
    peer = ["# sigwake.peer=peer-watermark_signal", "    TAP version 13", "    1..1", "    not ok 1 global.watermark_signal",
            "# sigwake.exit=1", "not ok 2 peer-watermark_signal"]
    console = lab_console([("delivered", "ok")], peer=peer, lost=(frame_of(2, 3),))  # the selftest's "not ok 1"
    got = interpret(outcome(console), TOKEN, ["watermark_sigio"], ("root",), 60, repeat=1, lossy=True)
    assert [(p.program, p.result) for p in got.peers] == [("watermark_signal", "error")]
    assert got.peers[0].detail.startswith("its report lost framed lines on the way")


def test_a_case_a_program_holds_but_the_guest_did_not_run_is_lost_not_passed() -> None:
    """The guest's plan and the host's may differ (a program listing other cases than its facts, a guest given
    other names): a known case of a program that ran, never reported, is no pass and no silence."""
    got = interpret(outcome(console_of(HEADER[:-1] + ["1..1"] + POLL_RUN + ["# sigwake.done=1"])), TOKEN, ["watermark_poll"],
                    ("root",), 60, cases={"watermark_poll": ("watermark_poll", "watermark_poll_rdnorm")})
    by_name = {r.name: r for r in got.reproducers}
    assert by_name["watermark_poll"].verdict is Verdict.DELIVERED
    assert by_name["watermark_poll_rdnorm"].verdict is Verdict.ERROR
    assert by_name["watermark_poll_rdnorm"].reason == "the guest did not report this case"
