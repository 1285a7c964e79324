"""A boot's seconds as the profile splits them (parse/boot_profile.py): every part named, the parts summing to
the boot, a case's wall time split into its processes' CPU time and their waiting."""

from __future__ import annotations

import pytest

from sigwake.parse.boot_profile import profile
from sigwake.parse.console import frame_line

TOKEN = "ab" * 8


def run(case: str, privilege: str, start: float, end: float, wall_us: int, cpu_us: int | None,
        number: int) -> list[str]:
    return [f"# sigwake.start={case}", f"# sigwake.case={case}", f"# sigwake.printk_start={start:.6f}",
            "    KTAP version 1", "    1..1", "    # verdict=delivered", f"    ok 1 {case}",
            f"# sigwake.duration_us={wall_us}", *([f"# sigwake.cpu_us={cpu_us}"] if cpu_us is not None else []),
            "# sigwake.exit=0",
            f"# sigwake.printk_end={end:.6f}", f"ok {number} {case}.{case} [{privilege} run 1]"]


def console(payloads: list[str]) -> str:
    framed = "".join(frame_line(TOKEN, n, p) for n, p in enumerate(payloads))
    return "[    0.000000] Linux version 6.12.118\n" + framed + "[   12.500000] reboot: Power down\n"


def test_the_parts_sum_to_the_boot_and_each_is_where_its_seconds_went() -> None:
    payloads = ["KTAP version 1", "# sigwake.init_uptime_ms=2000", "1..3", "# sigwake.pass=root",
                *run("watermark_sigio", "root", 3.0, 4.5, 1_200_000, 200_000, 1),
                *run("watermark_poll", "root", 5.0, 6.0, 900_000, 100_000, 2),
                "# sigwake.pass=user-paranoid2",
                *run("watermark_sigio", "user-paranoid2", 7.0, 10.0, 2_500_000, 500_000, 3), "# sigwake.done=3"]
    found = profile(console(payloads), total_s=15.0)
    parts = found.parts()
    assert sum(parts.values()) == pytest.approx(15.0)
    assert parts == pytest.approx({"host": 2.5, "kernel": 2.0, "init": 1.0, "root": 3.0, "user-paranoid2": 3.0,
                                   "between": 1.0, "after": 2.5})
    root = found.passes["root"]
    assert (root.runs_s, root.cpu_s, root.loop_s) == pytest.approx((2.1, 0.3, 0.9))
    sigio = found.cases["user-paranoid2/watermark_sigio"]
    assert (sigio.wall_s, sigio.cpu_s, sigio.waiting_s) == pytest.approx((2.5, 0.5, 2.0))
    assert found.console_bytes == len(console(payloads).encode())


def test_a_boot_without_the_kernel_logs_clock_is_all_unaccounted() -> None:
    payloads = ["KTAP version 1", "# sigwake.init_uptime_ms=2000", "1..0", "# sigwake.done=0"]
    assert profile(console(payloads), total_s=9.0).parts() == {"unaccounted (no kernel-log clock)": 9.0}


def test_a_run_that_did_not_say_its_cpu_time_leaves_its_waiting_unknown() -> None:
    payloads = ["KTAP version 1", "# sigwake.init_uptime_ms=2000", "1..2", "# sigwake.pass=root",
                *run("watermark_sigio", "root", 3.0, 4.5, 1_200_000, None, 1),
                *run("watermark_poll", "root", 5.0, 6.0, 900_000, 100_000, 2), "# sigwake.done=2"]
    found = profile(console(payloads), total_s=15.0)
    assert found.passes["root"].cpu_s is None and found.cases["root/watermark_sigio"].waiting_s is None
    assert found.cases["root/watermark_poll"].waiting_s == pytest.approx(0.8)
    assert sum(found.parts().values()) == pytest.approx(15.0)  # the parts are known all the same
