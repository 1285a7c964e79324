"""The LAVA target's own parts, fast: the job sigwake writes (checked by LAVA's own
schema), the log reader, the REST client's errors, and the bounded waits (with a
scripted server in place of a slow lab). The real dispatcher and server run in
test_lava_dispatcher.py and test_lava_server.py."""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from lava_lab import free_port
from sigwake.parse import console
from sigwake.programs import initramfs
from sigwake.judge.lava_results import lava_table
from sigwake.programs.catalogue import Catalogue
from sigwake.targets import qemu
from sigwake.commands.cli import REPO, main
from sigwake.targets.options import RunOptions
from sigwake.targets.boot_image import boot_arguments
from sigwake.kernels.kernels import Kernel
from sigwake.targets.lava_api import JobState, LavaError, LavaServer, base_url
from sigwake.targets.lava_job import PreparedJob, default_files, prepare_job, write_jobs
from sigwake.targets.lava_log import parse_log, unescape
from sigwake.targets.lava_target import LavaLab, Waited, read_back, wait_for
from sigwake.core.model import Origin, Runner
from sigwake.core.exit_codes import FINDING
from sigwake.judge.gate import of_run
from sigwake.commands.orchestrator import RunConfig, run_kernels
from sigwake.core.progress import Progress
from sigwake.store.store import load_result
from sigwake.core.verdicts import Verdict
from image_files import corrupt_bzimage

TCG = qemu.Accel("tcg", "test")
NO_TABLE = lava_table(Catalogue({}), ("root",), "debian")


@pytest.fixture
def kernel(tmp_path: Path) -> Kernel:
    image = tmp_path / "vmlinuz"
    image.write_bytes(corrupt_bzimage(4096))  # not really a kernel
    return Kernel("6.1.0-57-amd64", Origin("debian", "linux-image-6.1.0-57-amd64", "6.1.192-3", "bookworm",
                                           sha256="ab" * 32), image)


@pytest.fixture
def shared_initrd(tmp_path: Path) -> Path:
    path = tmp_path / "shared.cpio"
    path.write_bytes(initramfs.encode([initramfs.directory("bin")]))
    return path


def test_a_job_boots_as_qemu_here_does(kernel: Kernel, shared_initrd: Path, tmp_path: Path) -> None:
    config = RunOptions(TCG, repeat=2, privileges=("root", "user-paranoid2"))
    files = default_files(tmp_path / "files")
    job = prepare_job(kernel, shared_initrd, NO_TABLE, 3, config, files, "qemu")
    definition = yaml.safe_load(job.definition)
    deploy, boot, test = (next(iter(a.values())) for a in definition["actions"])
    kernel_arg = deploy["images"]["kernel"]["image_arg"]
    assert kernel_arg == f'-kernel {{kernel}} -append "{" ".join((*qemu.base_append(), *boot_arguments(config)))}"'
    assert "sigwake.repeat=2" in kernel_arg and "sigwake.passes=root,user-paranoid2" in kernel_arg
    assert definition["context"]["no_kvm"] is True and definition["context"]["memory"] == config.memory_mb
    assert boot["method"] == "qemu" and deploy["to"] == "tmpfs"
    assert test["timeout"]["seconds"] == int(config.timeout_for(3))  # our deadline, not LAVA's default
    assert definition["timeouts"]["job"]["seconds"] == int(job.timeout_s) > test["timeout"]["seconds"]
    # The kernel is published once under its sha256; the initramfs is the shared one plus this job's token.
    assert deploy["images"]["kernel"]["url"] == (files.directory / f"{'ab' * 32}.vmlinuz").resolve().as_uri()
    own = Path(deploy["images"]["initrd"]["url"].removeprefix("file://"))
    shared = shared_initrd.read_bytes()
    assert own.read_bytes().startswith(shared)
    token_file = {e.path: e.data for e in initramfs.decode(own.read_bytes()[len(shared):])}["sigwake/token"]
    assert token_file == job.token.encode() + b"\n"
    assert prepare_job(kernel, shared_initrd, NO_TABLE, 3, config, files, "qemu").token != job.token


def test_lavas_own_schema_accepts_the_job(kernel: Kernel, shared_initrd: Path, tmp_path: Path) -> None:
    schemas = pytest.importorskip("lava_common.schemas", reason="lava-dispatcher is not installed (./sigwake test installs it)")
    job = prepare_job(kernel, shared_initrd, NO_TABLE, 3, RunOptions(TCG), default_files(tmp_path), "qemu")
    schemas.validate(yaml.safe_load(job.definition), strict=True)


def test_kvm_is_asked_of_the_device_type(kernel: Kernel, shared_initrd: Path, tmp_path: Path) -> None:
    job = prepare_job(kernel, shared_initrd, NO_TABLE, 1, RunOptions(qemu.Accel("kvm", "lab")), default_files(tmp_path), "qemu")
    assert "no_kvm" not in yaml.safe_load(job.definition)["context"]


def test_the_monitor_matches_this_jobs_frames_only(kernel: Kernel, shared_initrd: Path, tmp_path: Path) -> None:
    job = prepare_job(kernel, shared_initrd, NO_TABLE, 1, RunOptions(TCG), default_files(tmp_path), "qemu")
    monitor = yaml.safe_load(job.definition)["actions"][2]["test"]["monitors"][0]
    said = "# sigwake.lava=pass watermark_sigio.watermark_sigio [user-paranoid1 run 2]"
    match = re.search(monitor["pattern"], console.frame_line(job.token, 7, said))
    assert match and match["result"] == "pass"
    assert match["test_case_id"] == "watermark_sigio.watermark_sigio [user-paranoid1 run 2]"  # the pass and the run
    # The KTAP result line is the harness's; LAVA's word is the guest's judged line alone.
    assert not re.search(monitor["pattern"], console.frame_line(job.token, 7, "not ok 3 watermark_sigio.watermark_sigio [root run 1]"))
    assert not re.search(monitor["pattern"], console.frame_line(job.token, 7, said)[:-8])  # a line LAVA has in part
    assert not re.search(monitor["pattern"], console.frame_line("0" * 16, 7, said))
    assert re.search(monitor["end"], console.frame_line(job.token, 99, "# sigwake.done=13"))
    assert re.search(monitor["start"], console.frame_line(job.token, 0, "KTAP version 1"))


def test_the_jobs_initramfs_carries_what_lava_shows(kernel: Kernel, shared_initrd: Path, tmp_path: Path) -> None:
    job = prepare_job(kernel, shared_initrd, NO_TABLE, 1, RunOptions(TCG), default_files(tmp_path), "qemu")
    own = Path(job.initrd_url.removeprefix("file://")).read_bytes()[len(shared_initrd.read_bytes()):]
    entries = {e.path: e for e in initramfs.decode(own)}
    assert entries["sigwake/lava"].data == NO_TABLE.encode() and entries["sigwake/lava"].mode & 0o777 == 0o444


def test_jobs_json_names_each_jobs_token(kernel: Kernel, shared_initrd: Path, tmp_path: Path) -> None:
    job = prepare_job(kernel, shared_initrd, NO_TABLE, 1, RunOptions(TCG), default_files(tmp_path / "files"), "qemu")
    write_jobs([job], tmp_path / "jobs")
    manifest = json.loads((tmp_path / "jobs" / "jobs.json").read_text())
    assert manifest[kernel.id]["token"] == job.token
    assert (tmp_path / "jobs" / manifest[kernel.id]["definition"]).read_text() == job.definition


LOG_LINES = [
    {"dt": "1", "lvl": "info", "msg": "start: 0 validate"},
    {"dt": "2", "lvl": "target", "msg": 'SIGWAKE t 0 0 # reason=a \\"quoted\\" word'},
    {"dt": "3", "lvl": "feedback", "msg": "[    4.06] reboot: Power down", "ns": "common"},
    {"dt": "4", "lvl": "results", "msg": {"case": "job", "definition": "lava", "result": "fail",
                                         "error_type": "Infrastructure", "error_msg": "qemu exited\n"}},
]


@pytest.mark.parametrize("form", ["lava-run", "server"])
def test_the_log_gives_the_console_back_and_lavas_word(form: str) -> None:
    lines = [json.dumps(r) for r in LOG_LINES]
    text = "\n".join(lines if form == "lava-run" else [f"- {line}" for line in lines]) + "\n- {torn"
    log = parse_log(text)
    assert log.console == 'SIGWAKE t 0 0 # reason=a "quoted" word\n[    4.06] reboot: Power down\n'
    assert (log.result, log.error, log.unreadable) == ("fail", "Infrastructure error: qemu exited", 1)


def test_unescape_inverts_lavas_quote_escaping() -> None:
    for original in ['plain', 'a "b"', 'ends with \\', 'a \\"c\\" d', '""', '\\\\"']:
        assert unescape(original.replace('"', '\\"')) == original


def test_a_server_url_is_taken_from_any_part_of_it() -> None:
    for url in ("https://lava.example.org", "https://lava.example.org/", "https://lava.example.org/RPC2",
                "https://lava.example.org/api/v0.2/", "https://lava.example.org/scheduler"):
        assert base_url(url) == "https://lava.example.org"


def test_an_unreachable_server_is_said_at_once() -> None:
    port = free_port()  # nobody listens on it
    with pytest.raises(LavaError, match=rf"LAVA at http://127.0.0.1:{port} is unreachable"):
        LavaServer(f"http://127.0.0.1:{port}", "t", request_timeout_s=5).submit("job")


@dataclass
class ScriptedServer:
    """A LAVA server's answers in order (the last one repeats), and the cancels it got."""

    states: list[JobState | LavaError]
    root: str = "http://lab"
    canceled: list[int] = field(default_factory=list)

    def job(self, job_id: int) -> JobState:
        answer = self.states.pop(0) if len(self.states) > 1 else self.states[0]
        if isinstance(answer, LavaError):
            raise answer
        return answer

    def cancel(self, job_id: int) -> None:
        self.canceled.append(job_id)


QUEUED = JobState("Submitted", "Unknown", "", None)
RUNNING = JobState("Running", "Unknown", "", None)
JOB = PreparedJob("k", "t", "", 0.05, "file:///x")


def lab(server: ScriptedServer, start_timeout_s: float = 0.05) -> LavaLab:
    return LavaLab(server, default_files(Path("/nonexistent")), lava_table, "qemu", start_timeout_s, poll_s=0.01)  # type: ignore[arg-type]


@pytest.mark.parametrize("states, timed_out, ended, canceled", [
    ([QUEUED, RUNNING, JobState("Finished", "Complete", "", 12.0)], False, "LAVA job 7 ended Complete", []),
    ([RUNNING, JobState("Finished", "Incomplete", "qemu exited", 1.0)], False,
     "LAVA job 7 ended Incomplete: qemu exited", []),
    ([QUEUED], True, "did not start within 0 s (state Submitted); canceled (is a qemu device online?)", [7]),
    ([RUNNING], True, "ran past its own timeout of 0 s (state Running); canceled", [7]),
    ([LavaError("LAVA at http://lab is unreachable: refused")], True,
     "did not start within 0 s (LAVA at http://lab is unreachable: refused)", [7]),
    ([RUNNING, LavaError("gone for a moment"), JobState("Finished", "Canceled", "", None)], False,
     "LAVA job 7 ended Canceled", []),
])
def test_waits_end_in_a_verdict(states: list[JobState | LavaError], timed_out: bool, ended: str,
                                canceled: list[int]) -> None:
    server = ScriptedServer(states)
    waited = wait_for(lab(server), 7, JOB, None)
    assert waited.timed_out == timed_out and ended in waited.ended and server.canceled == canceled


def test_an_interrupted_run_cancels_its_job() -> None:
    server = ScriptedServer([RUNNING])
    stop = threading.Event()
    stop.set()
    with pytest.raises(qemu.Stopped, match="LAVA job 7"):
        wait_for(lab(server, start_timeout_s=60), 7, JOB, stop)
    assert server.canceled == [7]


def test_an_unreachable_lab_is_recorded_for_every_kernel(tmp_path: Path, cache_root: Path) -> None:
    port = free_port()
    image = tmp_path / "vmlinuz-any"
    image.write_bytes(corrupt_bzimage(4096))  # never booted
    lab = LavaLab(LavaServer(f"http://127.0.0.1:{port}", "t", request_timeout_s=5), default_files(tmp_path / "files"),
                  lava_table)
    config = RunConfig(REPO, REPO / "build", cache_root, tmp_path / "results", (str(image),), lab=lab)
    summary = run_kernels(config, Progress(quiet=True))
    assert summary.failures == [f"LAVA: LAVA at http://127.0.0.1:{port} is unreachable: [Errno 111] Connection refused"]
    [result] = summary.results
    stored = load_result(tmp_path / "results" / f"{result.kernel_id}.json")
    assert stored.boot.status == "boot-failed" and stored.boot.detail.startswith("the LAVA job was not submitted: ")
    assert {c.verdict for c in stored.reproducers} == {Verdict.BOOT_FAILED}
    assert list((tmp_path / "files").glob("*.cpio")) == []  # the job's own initramfs is not left behind


def test_lava_jobs_writes_definitions_only(tmp_path: Path, cache_root: Path) -> None:
    image = tmp_path / "vmlinuz-any"
    image.write_bytes(corrupt_bzimage(4096))  # never booted
    assert main(["lava-jobs", str(tmp_path / "jobs"), "--kernel", str(image), "--repeat", "1"]) == 0
    manifest = json.loads((tmp_path / "jobs" / "jobs.json").read_text())
    [(kernel_id, entry)] = manifest.items()
    job = yaml.safe_load((tmp_path / "jobs" / entry["definition"]).read_text())
    assert "sigwake.repeat=1" in job["actions"][0]["deploy"]["images"]["kernel"]["image_arg"]
    assert job["actions"][0]["deploy"]["images"]["initrd"]["url"].endswith(f"{kernel_id}-{entry['token']}.cpio")


@dataclass
class CrashingLab:
    """A lab whose first job's kernel panics in the middle of its first case; each later job reports in full.
    Each job's console is framed with that job's own token, read from its initramfs as the guest reads it."""

    shared: Path
    root: str = "http://lab"
    definitions: list[str] = field(default_factory=list)

    def submit(self, definition: str) -> int:
        self.definitions.append(definition)
        return len(self.definitions)

    def job(self, job_id: int) -> JobState:
        return JobState("Finished", "Incomplete" if job_id == 1 else "Complete", "", 3.0)

    def job_url(self, job_id: int) -> str:
        return f"{self.root}/scheduler/job/{job_id}"

    def cancel(self, job_id: int) -> None:
        raise AssertionError("nothing to cancel")

    def log(self, job_id: int) -> str:
        initrd = yaml.safe_load(self.definitions[job_id - 1])["actions"][0]["deploy"]["images"]["initrd"]["url"]
        own = Path(initrd.removeprefix("file://")).read_bytes()[len(self.shared.read_bytes()):]
        token = {e.path: e.data for e in initramfs.decode(own)}["sigwake/token"].decode().strip()
        head = ["KTAP version 1", "# sigwake.release=6.1.0-57-amd64", "# sigwake.init_uptime_ms=900"]
        if job_id == 1:
            payloads = [*head, "1..2", "# sigwake.tainted=0", "# sigwake.pass=root", "# sigwake.paranoid=2",
                        "# sigwake.start=p", "# sigwake.case=a"]
            tail = ["[    3.1] Kernel panic - not syncing: Fatal exception"]
        else:
            payloads = [*head, "1..1", "# sigwake.tainted=0", "# sigwake.pass=root", "# sigwake.paranoid=2",
                        "# sigwake.start=p", "# sigwake.case=b", "    KTAP version 1", "    1..1",
                        "    # verdict=delivered", "    ok 1 b", "# sigwake.duration_us=900", "# sigwake.exit=0",
                        "ok 1 p.b [root run 1]", "# sigwake.done=1"]
            tail = []
        lines = [console.frame_line(token, n, p).rstrip("\n") for n, p in enumerate(payloads)] + tail
        return "\n".join(json.dumps({"dt": str(n), "lvl": "target", "msg": line}) for n, line in enumerate(lines))


@dataclass(frozen=True)
class OneProgram:
    reproducers: dict[str, Path]
    catalogue: Catalogue


def test_a_job_that_crashed_is_followed_by_a_fresh_job_for_the_runs_after_it(kernel: Kernel, shared_initrd: Path,
                                                                          tmp_path: Path) -> None:
    server = CrashingLab(shared_initrd)
    lab = LavaLab(server, default_files(tmp_path / "files"), lava_table, poll_s=0.01)  # type: ignore[arg-type]
    config = RunOptions(TCG, repeat=1, agree=1, privileges=("root",))
    binaries = OneProgram({"p": tmp_path / "p"}, Catalogue({}))
    got = lab.target(kernel, shared_initrd, "").run(binaries, config, tmp_path / "console.log")  # type: ignore[arg-type]
    assert len(server.definitions) == 2 and "sigwake.resume=root/p/a" in server.definitions[1]
    assert "sigwake.resume" not in server.definitions[0]
    assert (got.boot.status, got.boot.boots) == ("boot-failed", 2), got.boot
    assert "went on in 1 fresh boot(s): boot 2: ok" in got.boot.detail
    assert {r.name: r.verdict for r in got.reproducers} == {"a": Verdict.BOOT_FAILED, "b": Verdict.DELIVERED}
    assert (got.job_id, got.job_url) == ("1", "http://lab/scheduler/job/1")  # the first job's, with both consoles
    assert "LAVA jobs, boot by boot: http://lab/scheduler/job/1, http://lab/scheduler/job/2" in got.boot.detail
    assert "=== sigwake: boot 2, a fresh boot after root/p/a ended boot 1" in (tmp_path / "console.log").read_text()


def test_a_kernel_that_ends_its_job_as_infrastructure_error_is_still_the_kernels_crash(
        kernel: Kernel, shared_initrd: Path, tmp_path: Path, catalogue: Catalogue) -> None:
    # QEMU exits when the kernel panics (panic=-1, -no-reboot): LAVA's monitor says "Infrastructure error:
    # Connection closed", as for a lab's own failure. Nothing tells them apart, so the kernel's finding stands.
    token = "ab" * 8
    started = ["KTAP version 1", "# sigwake.release=6.12.118+deb13-amd64", "# sigwake.init_uptime_ms=900", "1..1",
               "# sigwake.tainted=0", "# sigwake.pass=root", "# sigwake.paranoid=2", "# sigwake.start=watermark_sigio"]
    lines = [{"dt": "0", "lvl": "target", "msg": "[    0.000000] Linux version 6.12.118+deb13-amd64 (debian-kernel@...) #1"}]
    lines += [{"dt": str(n), "lvl": "target", "msg": console.frame_line(token, n, p).rstrip("\n")}
              for n, p in enumerate(started)]
    ended = {"dt": "99", "lvl": "results", "msg": {"case": "job", "result": "fail", "error_type": "Infrastructure",
                                                  "error_msg": "Connection closed"}}
    log = "\n".join(json.dumps(line) for line in [*lines, ended])
    job = PreparedJob(kernel.id, token, "", 60.0, "file:///x")
    waited = Waited(JobState("Finished", "Incomplete", "", 5.0), False, "LAVA job 3 ended Incomplete")
    got = read_back(log, job, ["watermark_sigio"], RunOptions(TCG, repeat=1, privileges=("root",)), waited,
                    tmp_path / "c.log")
    assert got.boot.status == "boot-failed" and got.boot.target_failed == "", got.boot
    assert "Infrastructure error: Connection closed" in got.boot.detail
    judged = of_run([got.as_result(kernel.id, Runner("lava", 1))], catalogue)
    assert judged.exit_code == FINDING and {f.kind for f in judged.findings} >= {"crash"}, judged
