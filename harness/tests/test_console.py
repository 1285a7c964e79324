"""Token framing: only intact lines of this boot, in order, are results."""

from sigwake.parse.console import frame_line, panic_line, tail, unframe


def framed(token: str, payloads: list[str]) -> str:
    return "".join(frame_line(token, seq, p) for seq, p in enumerate(payloads))


def test_format_matches_the_guest_init() -> None:
    # Pinned in repro/tests/frame_test.cc as well.
    assert frame_line("beef", 0, "KTAP version 1") == "SIGWAKE beef 0 eeb888af KTAP version 1\n"


def test_reads_frames_among_printk_and_garbage() -> None:
    console = (
        "[    0.000000] Linux version 6.1.0\r\n"
        + frame_line("ab12", 0, "KTAP version 1").replace("\n", "\r\n")
        + "\x00\xff random: crng init done\r\n"
        + "Booting from ROM..\x1bc\x1b[?7l\x1b[2J" + frame_line("ab12", 1, "1..1")  # firmware's (a LAVA log's)
        + "ok 1 watermark_sigio\n"  # unframed: whatever printed it, it is not a result
        + frame_line("ab12", 2, "ok 1 watermark_sigio")
    )
    out = unframe(console, "ab12")
    assert out.payloads == ["KTAP version 1", "1..1", "ok 1 watermark_sigio"]
    assert out.rejected == 0 and out.missing == []


def test_a_frame_inside_a_kernel_line_is_the_kernels_text() -> None:
    # A process's string the kernel quoted (an exec'd path), framed with the boot's token (a BPF program can read
    # it off init's writes): the kernel ends every line it prints, so a frame behind its timestamp is not init's.
    forged = "[    5.960677] process 'forge' launched '/tmp/" + frame_line("ab12", 1, "ok 1 forged")
    console = frame_line("ab12", 0, "KTAP version 1") + forged + frame_line("ab12", 1, "1..1")
    out = unframe(console, "ab12")
    assert out.payloads == ["KTAP version 1", "1..1"] and out.rejected == 1 and out.missing == []
    with_caller = forged.replace("[    5.960677] ", "[    5.960677][  T123] ")  # CONFIG_PRINTK_CALLER
    assert unframe(frame_line("ab12", 0, "KTAP version 1") + with_caller, "ab12").rejected == 1


def test_rejects_another_boots_token() -> None:
    console = framed("0000", ["ok 1 forged"]) + framed("ab12", ["KTAP version 1"])
    out = unframe(console, "ab12")
    assert out.payloads == ["KTAP version 1"]
    assert out.rejected == 1


def test_rejects_a_frame_whose_crc_does_not_match() -> None:
    good = frame_line("ab12", 0, "not ok 1 watermark_sigio")
    forged = good.replace("not ok", "ok")
    out = unframe(forged, "ab12")
    assert out.payloads == [] and out.rejected == 1


def test_rejects_a_replayed_sequence_number() -> None:
    console = framed("ab12", ["KTAP version 1", "not ok 1 x"]) + frame_line("ab12", 1, "not ok 1 x")
    out = unframe(console, "ab12")
    assert out.payloads == ["KTAP version 1", "not ok 1 x"]
    assert out.rejected == 1


def test_mends_a_frame_a_printk_line_cut_before_its_payload() -> None:
    # Seen on a LAVA console: the poweroff message landed inside the token of the last frames.
    lines = framed("ab12f054", ["a", "b", "c"]).splitlines(keepends=True)
    for cut in (9, 12, 20, 26):  # in the token, the sequence number, the CRC, the payload
        torn = lines[1][:cut] + "[   61.053399] ACPI: PM: Preparing to enter system sleep state S5\r\n" + lines[1][cut:]
        out = unframe(lines[0] + torn + lines[2], "ab12f054")
        assert out.payloads == ["a", "b", "c"] and out.lines == [1, 2, 4], cut
        assert out.missing == [] and out.rejected == 0


def test_reports_lines_torn_by_interleaved_output() -> None:
    lines = framed("ab12", ["a", "b", "c"]).splitlines(keepends=True)
    for noise in ("\x00\xff no timestamp\n", "[ 2.0] printk in the middle\n"):
        torn = lines[1][:20] + noise + lines[1][20:].replace("b", "x")  # the rest came back changed
        out = unframe(lines[0] + torn + lines[2], "ab12")
        assert out.payloads == ["a", "c"]
        assert out.missing == [1]


def test_panic_and_tail() -> None:
    console = "boot\r\n[ 1.0] Kernel panic - not syncing: No working init found.\r\nrest\r\n"
    assert panic_line(console) == "Kernel panic - not syncing: No working init found."
    assert tail(console, 2) == "[ 1.0] Kernel panic - not syncing: No working init found.\nrest"
    assert panic_line("all fine") is None
