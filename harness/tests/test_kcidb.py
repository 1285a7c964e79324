"""The KCIDB submission read as its readers read it (kcidb_reader.py): inside kcidb-io's v5.3 schema with its
formats, and on KernelCI's dashboard a listed checkout per source with its git fields, a build per image, one
boot per booted build (none for the host), each known bug and each kernel report an issue with the tests that
show it, excerpts that start where the report does, and each test's own start."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from pathlib import Path

import pytest

import kcidb_reader
from sigwake.core.model import BootRecord, KernelResult, Origin, Runner, Splat
from sigwake.core.verdicts import Verdict
from sigwake.judge.flavours import flavour_findings
from sigwake.parse.console import frame_line
from sigwake.programs.catalogue import Catalogue
from sigwake.reports.kcidb_sources import debian_branch, debian_tag, token
from sigwake.reports.render_kcidb import EXCERPT_MAX, bounded, render_kcidb
from sigwake.reports.report import ReportOptions, write_reports
from sigwake.store.store import load_results
from sigwake.targets.capture import Capture
from sigwake.targets.interpret import combine_boots, read_boot
from test_reports import COMMITTED, CRASH, DEAD, OLD, REGRESSED, D, case, kernel

FIX = "sigwake_lab:fix_fd20bb51ed39"


def build_id(kernel: KernelResult, origin: str = "sigwake") -> str:
    return f"{origin}:{token(kernel.kernel_id)}_{kernel.origin.sha256[:16]}" if kernel.origin.sha256 else \
        f"{origin}:{token(kernel.kernel_id)}"


def test_statuses_ids_and_the_known_bug_of_6_1(tmp_path: Path, catalogue: Catalogue) -> None:
    data = render_kcidb([OLD, REGRESSED, DEAD], catalogue, tmp_path, "sigwake_lab")
    kcidb_reader.validate(data)
    assert all(t["id"].startswith("sigwake_lab:") for t in data["tests"])  # validate(): each id once
    status = {(t["build_id"], t["path"]): t for t in data["tests"]}
    old = build_id(OLD, "sigwake_lab")
    known = status[(old, "sigwake.root.watermark_sigio")]
    assert known["status"] == "FAIL"  # faulty, as known: each pass its own path
    assert status[(old, "sigwake.root.watermark_poll")]["status"] == "PASS"
    assert status[(old, "sigwake.user-paranoid3.refused-whole")]["status"] == "SKIP"  # refused whole: one test
    assert status[(old, "sigwake.root.exactly_once")]["status"] == "ERROR"  # the reproducer's own failure
    assert not any("log_url" in t for t in data["tests"])  # no --log-base-url: no file:// URL a dashboard cannot open
    dead = [t for t in data["tests"] if t["build_id"] == build_id(DEAD, "sigwake_lab")]
    assert [(t["path"], t["status"]) for t in dead] == [("boot", "FAIL"), ("sigwake.root.watermark_sigio", "MISS")]
    assert dead[0]["log_excerpt"] == "panic here"  # no report and no console log: the boot's tail
    # the known failure is an incident of the fix's issue, and so is the regression: 6.12.9 should have the fix
    # and behaves as a kernel without it
    issue = next(i for i in data["issues"] if i["id"] == FIX)
    assert issue["report_url"].endswith("?id=fd20bb51ed39") and issue["culprit"]["code"] is True
    assert issue["report_subject"] == "perf/ring_buffer: Trigger IO signals for watermark_wakeup"
    regression = status[(build_id(REGRESSED, "sigwake_lab"), "sigwake.root.watermark_sigio")]
    assert [(i["test_id"], i["present"]) for i in data["incidents"] if i["issue_id"] == FIX] == [
        (known["id"], True), (regression["id"], True)]
    view = kcidb_reader.dashboard(data)
    assert [t["path"] for t in view.uncategorized] == ["boot"]  # the crash with no report: a reader's to triage
    # a fix a kernel has where it was not known to: an incident of the bug with the bug not present
    fixed = dataclasses.replace(OLD, reproducers=[case("watermark_sigio", Verdict.DELIVERED)])
    unexpected = render_kcidb([fixed], catalogue, tmp_path, "sigwake_lab")
    assert [i["present"] for i in unexpected["incidents"] if i["issue_id"] == FIX] == [False]
    assert render_kcidb([OLD, REGRESSED, DEAD], catalogue, tmp_path, "sigwake_lab") == data  # stable across re-renders
    with pytest.raises(ValueError, match="origin"):
        render_kcidb([OLD], catalogue, tmp_path, "Not-An-Origin")


def test_a_report_is_an_issue_whose_incident_is_the_test_it_hit(tmp_path: Path, catalogue: Catalogue) -> None:
    warn = Splat("warning", "WARNING in perf_event_wakeup", 3, "WARNING: CPU: 0 PID: 9 at ...", privilege="root",
                 case="watermark_sigio", tainted_before="0", tainted_after="512")
    outside = Splat("warning", "WARNING in perf_event_exit_task", 9, "WARNING: CPU: 0 PID: 1 at ...", printk_s=2.5)
    console = [frame_line("ab", 0, "# sigwake.start=watermark_sigio"), "------------[ cut here ]------------\n",
               "[ 1.0] WARNING: CPU: 0 PID: 9 at ...\n", frame_line("ab", 1, "ok 1 watermark_sigio"),
               frame_line("ab", 2, "# sigwake.start=watermark_poll"), frame_line("ab", 3, "ok 2 watermark_poll")]
    (tmp_path / "6.12.9-amd64.console.log").write_text("".join(console))
    splatted = dataclasses.replace(REGRESSED, splats=[warn, outside], kernel_version="#1 SMP Debian 6.12.9-1 (2026-10-12)",
                                   boot=dataclasses.replace(REGRESSED.boot, started_at="2026-12-07T06:00:00.000+00:00"),
                                   reproducers=[dataclasses.replace(REGRESSED.reproducers[0], console_span=[1, 4])])
    rt = dataclasses.replace(splatted, kernel_id="6.12.9-rt-amd64", splats=[],
                             origin=dataclasses.replace(splatted.origin, package="linux-image-6.12.9-rt-amd64",
                                                        sha256="f" * 64))
    data = render_kcidb([splatted, rt], catalogue, tmp_path, "sigwake", "https://logs.example.org/run1")
    kcidb_reader.validate(data)
    assert len(data["checkouts"]) == 1  # generic and rt of one source version: one checkout
    build = build_id(splatted)
    view = kcidb_reader.dashboard(data)
    assert [t["path"] for t in view.boots[build]] == ["boot"]  # the reports are no second boot
    assert not any("splat" in t["path"] for t in data["tests"])
    case_test = next(t for t in view.tests[build] if t["path"] == "sigwake.root.watermark_sigio")
    assert case_test["status"] == "FAIL" and case_test["misc"]["finding"] == "splat"
    # its own console lines from the report's first, frames read as their payload, the kernel's lines as printed
    assert case_test["log_excerpt"] == ("------------[ cut here ]------------\n[ 1.0] WARNING: CPU: 0 PID: 9 at ...\n"
                                        "ok 1 watermark_sigio")
    assert case_test["log_url"] == "https://logs.example.org/run1/6.12.9-amd64.console.log"
    issues = {i["report_subject"]: i for i in data["issues"]}
    hit = view.issues[issues["WARNING in perf_event_wakeup"]["id"]]
    assert [(i["test_id"], i["misc"]["tainted_after"]) for i in hit] == [(case_test["id"], "512")]
    # a report outside every case: a test of the kernel's log, not a failed boot
    boot = view.boots[build][0]
    assert boot["status"] == "PASS"
    log = next(t for t in view.tests[build] if t["path"] == "sigwake.kernel_log")
    assert log["status"] == "FAIL" and log["log_excerpt"] == "WARNING: CPU: 0 PID: 1 at ..."
    assert log["start_time"] == "2026-12-07T06:00:02.500+00:00"  # when the kernel printed it
    assert [i["test_id"] for i in view.issues[issues["WARNING in perf_event_exit_task"]["id"]]] == [log["id"]]
    assert not view.uncategorized  # the splat's test is its issue's; rt's regression, the fix's
    assert "start_time" not in next(b for b in data["builds"] if b["id"] == build)  # Debian's says only a day


def test_every_report_is_an_incident_of_some_test(tmp_path: Path, catalogue: Catalogue) -> None:
    # A program that reported no case names its report by the program (no case test has that name), and a
    # printk thread's report lands after its run's last line: each still has a test, an excerpt and an incident.
    console = [frame_line("ab", 0, "# sigwake.start=watermark_sigio"), frame_line("ab", 1, "ok 1 watermark_sigio"),
               "------------[ cut here ]------------\n", "[ 2.0] WARNING: CPU: 0 PID: 9 at ...\n"]
    (tmp_path / "6.12.9-amd64.console.log").write_text("".join(console))
    late = Splat("warning", "WARNING in perf_pending_task", 4, "WARNING: CPU: 0 PID: 9 at ...", privilege="root",
                 case="watermark_sigio")
    program = Splat("warning", "WARNING in perf_event_exit_task", 4, "WARNING: CPU: 0 PID: 7 at ...", privilege="root",
                    case="sigtrap_perf")  # a program's name, no case's
    cases = [dataclasses.replace(REGRESSED.reproducers[0], console_span=[1, 2])]
    data = render_kcidb([dataclasses.replace(REGRESSED, splats=[late, program], reproducers=cases)], catalogue, tmp_path)
    kcidb_reader.validate(data)
    tests = {t["id"]: t for t in data["tests"]}
    on = {i["misc"]["title"]: tests[i["test_id"]] for i in data["incidents"] if "title" in i.get("misc", {})}
    assert on["WARNING in perf_pending_task"]["path"] == "sigwake.root.watermark_sigio"
    assert on["WARNING in perf_pending_task"]["log_excerpt"].endswith("ok 1 watermark_sigio\n\nWARNING: CPU: 0 PID: 9 at ...")
    assert on["WARNING in perf_event_exit_task"]["path"] == "sigwake.kernel_log"


def test_one_title_is_two_issues_where_one_follows_the_emulator(tmp_path: Path, catalogue: Catalogue) -> None:
    double = Splat("panic", "PANIC: double fault in alloc_pid", 1, "traps: PANIC: double fault", fatal=True)
    tcg = dataclasses.replace(REGRESSED, splats=[double], boot=dataclasses.replace(REGRESSED.boot, status="boot-failed"),
                              runner=Runner("qemu", 3, "QEMU emulator version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18)",
                                            "tcg"))
    kvm = dataclasses.replace(tcg, kernel_id="6.12.9-kvm", runner=Runner("qemu", 3, "QEMU emulator version 9.2", "kvm"))
    data = render_kcidb([tcg, kvm], catalogue, tmp_path)
    kcidb_reader.validate(data)
    by_id = {i["id"]: i for i in data["issues"] if "splat_" in i["id"]}
    assert len(by_id) == 2 and {str(i["culprit"]) for i in by_id.values()} == {
        str({"code": True, "tool": False, "harness": False}), str({"tool": True, "harness": False})}
    ended = [i for i in data["incidents"] if i["test_id"].endswith(":boot")]
    assert len(ended) == 2  # each crash on the boot it ended, under its own issue
    assert len({i["issue_id"] for i in ended}) == 2


def test_the_host_is_no_build_and_no_boot(tmp_path: Path, catalogue: Catalogue) -> None:
    host = dataclasses.replace(kernel("host-6.18.44", "6.18.44", [case("watermark_sigio", Verdict.DELIVERED)]),
                               origin=Origin("host"), runner=Runner("native", 3), boot=BootRecord("native", 4.0),
                               kernel_version="#1 SMP PREEMPT_DYNAMIC Mon Nov 30 16:40:00 UTC 2026",
                               splats=[Splat("warning", "WARNING in exc_debug_kernel", 1, "WARNING: ...")])
    data = render_kcidb([host], catalogue, tmp_path)
    kcidb_reader.validate(data)
    (build,), (checkout,) = data["builds"], data["checkouts"]
    assert "status" not in build and "not built by sigwake" in build["comment"]
    assert checkout["start_time"] == "2026-11-29T23:59:56+00:00"  # when its run began: recorded less its 4 s
    # (when sigwake took the source); when it was built is misc's
    assert checkout["misc"]["built"] == "2026-11-30T16:40:00+00:00"
    view = kcidb_reader.dashboard(data)
    assert view.builds == {"INCONCLUSIVE": 1} and view.boots == {}
    by_path = {t["path"]: t for t in view.tests[build["id"]]}
    case_test, log = by_path["sigwake.root.watermark_sigio"], by_path["sigwake.kernel_log"]
    assert case_test["environment"]["misc"]["platform"] == "host-x86_64"
    assert "natively" in case_test["environment"]["comment"]
    (incident,) = data["incidents"]
    assert incident["test_id"] == log["id"] and log["path"] == "sigwake.kernel_log"  # a report of no case, no boot
    assert by_path["sigwake.run"]["status"] == "PASS" and "natively" in by_path["sigwake.run"]["log_excerpt"]


def test_a_debian_kernel_is_its_upload_on_salsa() -> None:
    assert debian_tag("6.12.95-1~bpo12+1") == "debian/6.12.95-1_bpo12+1"  # DEP-14
    assert debian_tag("1:2.0-1") == "debian/1%2.0-1"
    assert debian_branch("6.1.192-3", "bookworm") == "debian/6.1/bookworm"
    assert debian_branch("6.12.95-1~bpo12+1", "bookworm-backports") == "debian/6.12/bookworm-backports"
    assert debian_branch("7.2.13-1", "sid") == "debian/latest"


def test_a_kernel_built_from_source_is_a_checkout_of_its_commit_and_patchset(tmp_path: Path,
                                                                            catalogue: Catalogue) -> None:
    commit = "0123456789abcdef0123456789abcdef01234567"
    origin = Origin("file", path="/b/vmlinux", sha256="e" * 64, git_tree="/src/linux", git_commit=commit,
                    config="tinyconfig + perf.config", built_at="2026-11-30T16:40:00+00:00",
                    git_url="https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git", git_branch="master",
                    git_name="v6.18-rc3-12-g0123456789ab", patchset_hash="")
    patched = dataclasses.replace(origin, sha256="d" * 64, patchset_hash="a" * 64)
    local = dataclasses.replace(origin, sha256="c" * 64, git_url="/home/me/linux", patchset_hash=None)
    data = render_kcidb([dataclasses.replace(OLD, kernel_id=f"k{n}", origin=o)
                         for n, o in enumerate((origin, patched, local))], catalogue, tmp_path)
    kcidb_reader.validate(data)
    base, with_patch, elsewhere = data["checkouts"]
    assert (base["git_commit_hash"], base["git_repository_branch"], base["patchset_hash"]) == (commit, "master", "")
    assert (base["tree_name"], base["git_commit_name"], base["start_time"]) == (
        "linux", "v6.18-rc3-12-g0123456789ab", "2026-11-30T16:40:00+00:00")
    assert with_patch["id"] != base["id"] and with_patch["patchset_hash"] == "a" * 64  # validate-patch's two sides
    assert "git_repository_url" not in elsewhere and elsewhere["misc"]["remote"] == "/home/me/linux"  # https only
    assert "patchset_hash" not in elsewhere  # uncommitted changes beside the patches: no patchset known,
    assert "git_commit_hash" not in elsewhere and elsewhere["misc"]["base_commit"] == commit  # and no commit
    assert data["builds"][0]["start_time"] == "2026-11-30T16:40:00+00:00"


def test_a_crashed_boot_shows_its_report_from_the_first_line(tmp_path: Path, catalogue: Catalogue) -> None:
    shutil.copytree(CRASH, tmp_path / "results")
    write_reports(tmp_path / "results", ReportOptions(), catalogue)
    data = json.loads((tmp_path / "results" / "kcidb" / "submission.json").read_text())
    kcidb_reader.validate(data)
    (boot,) = [t for t in data["tests"] if t["path"] == "boot"]
    lines = boot["log_excerpt"].splitlines()
    assert "PANIC: double fault" in lines[0] and any("RIP:" in line for line in lines)
    assert any("Kernel panic" in line for line in lines[-5:])


def test_a_long_excerpt_keeps_its_head_and_its_tail() -> None:
    text = "BUG: first line\n" + "x" * 40000 + "\nKernel panic - not syncing: last line"
    kept = bounded(text)
    assert len(kept) <= EXCERPT_MAX and kept.startswith("BUG: first line") and kept.endswith("last line")
    head, note, tail = re.split(r"\n(\[\.\.\. \d+ characters left out \.\.\.\])\n", kept)
    assert int(note.split()[1]) == len(text) - len(head) - len(tail)  # what it says was left out, exactly


def test_a_run_starts_at_its_boots_start_plus_the_kernel_logs_clock() -> None:
    token = "cd" * 8
    payloads = ["KTAP version 1", "# sigwake.release=6.12.118+deb13-amd64", "# sigwake.init_uptime_ms=900", "1..1",
                "# sigwake.tainted=0", "# sigwake.pass=root", "# sigwake.paranoid=2", "# sigwake.start=watermark_sigio",
                "# sigwake.case=watermark_sigio", "# sigwake.printk_start=12.250000", "    KTAP version 1", "    1..1",
                "    # verdict=delivered", "    ok 1 watermark_sigio", "# sigwake.duration_us=1000", "# sigwake.exit=0",
                "ok 1 watermark_sigio.watermark_sigio [root run 1]", "# sigwake.done=1"]
    text = "".join(frame_line(token, n, p) for n, p in enumerate(payloads))
    for started, boot_at, run_at in ((1_796_000_000.0, "2026-11-30T00:53:20.000+00:00", "2026-11-30T00:53:32.250+00:00"),
                                     (None, None, None)):  # a target that gives no clock: no time is made up
        read = read_boot(Capture(text, 0, False, 5.0, "", started=started), token, 600.0)
        outcome = combine_boots([read], ["watermark_sigio"], ("root",), 1)
        assert (outcome.boot.started_at, outcome.reproducers[0].started_at) == (boot_at, run_at)


def test_a_flavour_that_differs_and_a_case_a_crash_lost_are_incidents(tmp_path: Path, catalogue: Catalogue) -> None:
    cloud = dataclasses.replace(REGRESSED, kernel_id="6.12.9-cloud-amd64",
                                origin=dataclasses.replace(REGRESSED.origin, package="linux-image-6.12.9-cloud-amd64",
                                                           sha256="c" * 64),
                                reproducers=[case("watermark_sigio", Verdict.DELIVERED), case("watermark_poll", D)])
    data = render_kcidb([REGRESSED, cloud], catalogue, tmp_path)
    kcidb_reader.validate(data)
    flavour = [i for i in data["incidents"] if i["issue_id"].startswith("sigwake:flavour_")]
    assert [i["test_id"] for i in flavour] == [f"{build_id(cloud)}:root:watermark_sigio"]
    # a case folded into a pass refused whole still gets its incident: on the refused pass's test
    refusing = dataclasses.replace(cloud, reproducers=[*cloud.reproducers, case("watermark_sigio", Verdict.UNSUPPORTED,
                                                                                "user-paranoid3", "EACCES")])
    giving = dataclasses.replace(REGRESSED, reproducers=[*REGRESSED.reproducers,
                                                         case("watermark_sigio", D, "user-paranoid3")])
    refused = render_kcidb([giving, refusing], catalogue, tmp_path)
    assert f"{build_id(refusing)}:user-paranoid3.refused-whole" in [
        i["test_id"] for i in refused["incidents"] if i["issue_id"].startswith("sigwake:flavour_")]
    # a run a crash cut off says nothing of the kernel: delivered twice and cut once is no flavour's difference
    cut = dataclasses.replace(cloud, reproducers=[dataclasses.replace(
        case("watermark_sigio", Verdict.FLAKY), runs={"delivered": 2, "boot-failed": 1})])
    assert flavour_findings([dataclasses.replace(REGRESSED, reproducers=[case("watermark_sigio", D)]), cut]) == []
    fatal = Splat("bug", "BUG: unable to handle kernel NULL pointer dereference in f", 5, "BUG: ...", fatal=True,
                  privilege="root", case="watermark_sigio")
    lost = dataclasses.replace(REGRESSED, splats=[fatal], boot=dataclasses.replace(REGRESSED.boot, status="boot-failed"),
                               reproducers=[REGRESSED.reproducers[0],
                                            case("watermark_poll", Verdict.BOOT_FAILED, reason="never ran: the boot "
                                                 "ended: Kernel panic")])
    data = render_kcidb([lost], catalogue, tmp_path)
    issue = next(i["id"] for i in data["issues"] if i.get("report_subject") == fatal.title)
    assert sorted(i["test_id"].rsplit(":", 1)[-1] for i in data["incidents"] if i["issue_id"] == issue) == [
        "boot", "watermark_poll", "watermark_sigio"]  # the case it hit, the boot it ended, the case it lost


def test_a_native_run_and_a_selftest_start_by_the_clock_the_runner_said() -> None:
    """The host's runner gives no kernel log's clock and no boot: each run says the machine's own clock as it
    starts (the harness's), and a selftest's tests carry their program's start."""
    token = "ef" * 8
    payloads = ["KTAP version 1", "1..2", "# sigwake.pass=root", "# sigwake.paranoid=2",
                "# sigwake.start=watermark_sigio", "# sigwake.case=watermark_sigio",
                "# sigwake.clock_start=1796000012.250000", "    KTAP version 1", "    1..1", "    # verdict=delivered",
                "    ok 1 watermark_sigio", "# sigwake.duration_us=1000", "# sigwake.exit=0",
                "ok 1 watermark_sigio.watermark_sigio [root run 1]", "# sigwake.peer=peer-watermark_signal",
                "# sigwake.clock_start=1796000013.500000", "    TAP version 13", "    1..1",
                "    ok 1 global.watermark_signal", "# sigwake.duration_us=20", "# sigwake.exit=0",
                "ok 2 peer peer-watermark_signal", "# sigwake.done=2"]
    text = "".join(frame_line(token, n, p) for n, p in enumerate(payloads))
    read = read_boot(Capture(text, 0, False, 5.0, "", started=None), token, 600.0)
    outcome = combine_boots([read], ["watermark_sigio"], ("root",), 1)
    assert outcome.reproducers[0].started_at == "2026-11-30T00:53:32.250+00:00"
    assert [(p.test, p.started_at) for p in outcome.peers] == [("global.watermark_signal",
                                                                 "2026-11-30T00:53:33.500+00:00")]


def test_each_test_starts_when_its_run_did(tmp_path: Path, catalogue: Catalogue) -> None:
    timed = dataclasses.replace(OLD, boot=dataclasses.replace(OLD.boot, started_at="2026-12-07T06:00:00.000+00:00"),
                                reproducers=[dataclasses.replace(c, started_at=f"2026-12-07T06:00:{10 + n}.500+00:00")
                                             for n, c in enumerate(OLD.reproducers)])
    data = render_kcidb([timed], catalogue, tmp_path)
    kcidb_reader.validate(data)
    starts = [t["start_time"] for t in data["tests"]]
    assert starts[0] == "2026-12-07T06:00:00.000+00:00" and len(set(starts)) == len(starts)


def test_the_committed_results_read_on_the_dashboard(tmp_path: Path, catalogue: Catalogue) -> None:
    results = tmp_path / "results"
    shutil.copytree(COMMITTED, results)
    write_reports(results, ReportOptions(), catalogue)
    data = json.loads((results / "kcidb" / "submission.json").read_text())
    kcidb_reader.validate(data)
    view = kcidb_reader.dashboard(data)
    assert view.unlisted == [] and all(c.get("git_repository_url") or c["tree_name"] == "host"
                                       for c in data["checkouts"])
    # what the dashboard cannot do with them: open a tree's details, which it finds by commit hash (Debian's
    # tag names one this machine cannot reach; the host's source is not known)
    assert set(view.no_details) == {c["id"] for c in data["checkouts"]}
    for b in data["builds"]:
        boots = view.boots.get(b["id"], [])
        assert len(boots) == (0 if b["misc"]["kernel_id"].startswith("host-") else 1), b["id"]
    assert all("log_excerpt" in t for t in data["tests"])
    # every test that ran starts when it did (a guest's by its boot and the kernel log's clock, the host's by its
    # own); only what a crash left unrun has no start, and the reports of a kernel booted more than once (a
    # report's clock may be a later boot's, whose start is not kept)
    booted_again = {build_id(k) for k in load_results(COMMITTED).results if k.boot.boots > 1}
    assert [t["id"] for t in data["tests"] if "start_time" not in t and t["status"] != "MISS"
            and not (t["path"] == "sigwake.kernel_log" and t["build_id"] in booted_again)] == []
    xfail = [t for tests in view.tests.values() for t in tests if t["misc"].get("outcome") == "xfail"]
    assert xfail and not [t for t in xfail if t in view.uncategorized]  # every known failure has its issue
    assert all(t["misc"].get("outcome") == "fail" or t["path"] == "boot" or t["path"].startswith("kselftest.")
               for t in view.uncategorized)  # what is left is a finding, each for a reader to triage
    assert set(view.issues) <= {i["id"] for i in data["issues"]}
    debian_issues = {i["issue_id"] for i in data["incidents"] if "test_id" in i and "host" not in i["test_id"]}
    assert debian_issues <= view.listed_issues
