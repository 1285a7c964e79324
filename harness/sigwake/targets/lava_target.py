"""A kernel booted by a LAVA lab: one job per kernel, submitted, waited for with
bounded waits, its log read back and judged by the same framed-console parser
as a local boot, fresh jobs after one that crashed as a local boot has. A job
that is refused, never starts, fails or is canceled is recorded as such, with
the job's id and URL."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import qemu
from ..programs.binaries import Binaries
from ..programs.catalogue import Catalogue
from .capture import Capture
from .options import RunOptions
from .fresh_boots import with_fresh_boots
from .interpret import BootRead, KernelOutcome, combine_boots, read_boot
from ..kernels.kernels import Kernel
from .lava_api import JobState, LavaError, LavaServer
from .lava_job import LavaFiles, PreparedJob, prepare_job
from .lava_log import parse_log
from ..core.model import Runner
from ..core.progress import Progress


@dataclass(frozen=True)
class LavaLab:
    """What a lab tells sigwake: its server, its device type, and where jobs' files go; and what the lab is
    to show for each run (judge/lava_results.lava_table, given by the command: a target does not judge)."""

    server: LavaServer
    files: LavaFiles
    table: Callable[[Catalogue, tuple[str, ...], str, int], str]
    device_type: str = "qemu"
    start_timeout_s: float = 1800.0  # a job still queued after this is canceled and recorded as timeout
    poll_s: float = 5.0

    # Where the run's images boot (targets.Place): a worker's QEMU, which sigwake cannot probe from here.
    def accel(self, option: str | None) -> qemu.Accel:
        return lava_accel(option)

    def missing(self, arch: str) -> str | None:
        return None  # the lab's device type says what it boots

    def machine(self, arch: str) -> str:
        return f"LAVA device type {self.device_type}"  # the worker's QEMU is not known here

    def options_for(self, options: RunOptions, arch: str, option: str | None) -> RunOptions:
        return options  # the worker boots it as it boots any

    def at_once(self, jobs: int, memory_mb: int) -> int:
        return jobs  # jobs in flight: the lab schedules its devices

    def announce(self, progress: Progress) -> str | None:
        try:
            progress.step(f"LAVA {self.server.version()} at {self.server.root}, device type {self.device_type}")
        except LavaError as e:  # every kernel is still recorded, each job as not submitted
            progress.step(str(e))
            return f"LAVA: {e}"
        return None

    def target(self, kernel: Kernel, initrd: Path, machine: str) -> LavaTarget:
        return LavaTarget(kernel, initrd, self)


def lava_accel(override: str | None) -> qemu.Accel:
    """What the job asks of the worker's QEMU: sigwake cannot probe a worker's KVM from here, so
    TCG unless the lab says --accel kvm."""
    if override == "kvm":
        return qemu.Accel("kvm", "asked of the LAVA worker with --accel kvm")
    return qemu.Accel("tcg", "asked of the LAVA worker (a worker's KVM cannot be probed from here; --accel kvm)")


@dataclass(frozen=True)
class Waited:
    state: JobState | None  # None: the server could not be asked at the end
    timed_out: bool
    ended: str  # how the job ended, in words


def wait_for(lab: LavaLab, job_id: int, job: PreparedJob, stop: threading.Event | None) -> Waited:
    """Polls until the job finishes; cancels it when it does not start in time, runs past its
    own timeout, or the run is interrupted (then raises qemu.Stopped)."""
    name = f"LAVA job {job_id}"
    queued_until = time.monotonic() + lab.start_timeout_s
    running_until: float | None = None
    state: JobState | None = None
    last_error = ""
    while True:
        try:
            state = lab.server.job(job_id)
            last_error = ""
        except LavaError as e:  # a server that went away for a while: keep asking until a deadline
            last_error = str(e)
        now = time.monotonic()
        if state is not None and state.finished:
            failure = f": {state.failure}" if state.failure else ""
            return Waited(state, False, f"{name} ended {state.health}{failure}")
        if state is not None and state.started and running_until is None:
            running_until = now + job.timeout_s + lab.poll_s * 2
        late = (running_until is not None and now > running_until) or (running_until is None and now > queued_until)
        if stop is not None and stop.is_set():
            _cancel(lab, job_id)
            raise qemu.Stopped(f"stopped while {name} ran; it was canceled")
        if late:
            _cancel(lab, job_id)
            where = f"state {state.state}" if state is not None else last_error
            if running_until is None:
                return Waited(state, True, f"{name} did not start within {lab.start_timeout_s:.0f} s ({where}); "
                                           f"canceled (is a {lab.device_type} device online?)")
            return Waited(state, True, f"{name} ran past its own timeout of {job.timeout_s:.0f} s ({where}); canceled")
        if stop is not None:
            stop.wait(lab.poll_s)
        else:
            time.sleep(lab.poll_s)


def _cancel(lab: LavaLab, job_id: int) -> None:
    try:
        lab.server.cancel(job_id)
    except LavaError:
        pass  # the verdict says the job was given up; the server may have gone


def read_job(log_text: str, job: PreparedJob, programs: list[str], config: RunOptions, waited: Waited,
             console_log: Path, line_offset: int = 0, waited_s: float = 0.0) -> BootRead:
    """A job's log read as a local boot's console is: the same unframing with the job's token, the same parser;
    LAVA's word on the job is the boot's detail when the init did not report in full, or when it did and LAVA
    judged the job otherwise. `waited_s`: how long sigwake waited for it, its time when LAVA gives none (a job
    canceled at its timeout), so that fresh jobs stay bounded by time."""
    log = parse_log(log_text)
    console_log.write_text(log.console)
    ended = "; ".join(filter(None, [waited.ended, log.error]))
    seconds = waited.state.seconds if waited.state is not None and waited.state.seconds is not None else waited_s
    # No lab error is taken for the target's: LAVA says "Infrastructure error: Connection closed" when QEMU exits,
    # which is also how a kernel that panics (panic=-1, -no-reboot) ends a job.
    outcome = Capture(log.console, None, waited.timed_out, seconds, "", ended=ended)
    read = read_boot(outcome, job.token, config.timeout_for(len(programs)), line_offset, lossy=True)
    if read.status == "ok" and waited.state is not None and waited.state.health != "Complete":
        read = dataclasses.replace(read, detail=ended)
    return read


def read_back(log_text: str, job: PreparedJob, programs: list[str], config: RunOptions, waited: Waited,
              console_log: Path, cases: dict[str, tuple[str, ...]] | None = None) -> KernelOutcome:
    """One job's log judged as a kernel's outcome."""
    return combine_boots([read_job(log_text, job, programs, config, waited, console_log)], programs,
                         config.privileges, config.repeat, cases)


@dataclass(frozen=True)
class LavaTarget:
    kernel: Kernel
    initrd: Path  # the run's initramfs; each job gets a copy with its own token
    lab: LavaLab

    def run(self, binaries: Binaries, config: RunOptions, console_log: Path) -> KernelOutcome:
        """A job, and after one that crashed or hung once the init ran programs, fresh jobs for the runs after
        it (fresh_boots.py), as a local boot has; the first job's id and page are the result's."""
        programs = sorted(binaries.reproducers)
        cases = binaries.catalogue.cases_of(programs, config.cases)
        table = self.lab.table(binaries.catalogue, config.privileges, self.kernel.origin.kind, config.cpus)
        jobs: list[tuple[str, str]] = []

        def boot(log: Path, resume: str, offset: int) -> BootRead:
            read, job = self.one_job(programs, table, config, log, resume, offset)
            jobs.append(job)
            return read
        boots = with_fresh_boots(boot, console_log, config.timeout_for(len(programs)), config.fresh_boots)
        judged = combine_boots(boots, programs, config.privileges, config.repeat, cases)
        job_id, job_url = next((j for j in jobs if j[0]), ("", ""))
        if len(jobs) > 1:  # the result names the first; the rest are said, each with its console in the log
            judged.boot.detail += "; LAVA jobs, boot by boot: " + ", ".join(url or "not submitted" for _, url in jobs)
        return dataclasses.replace(judged, job_id=job_id, job_url=job_url)

    def one_job(self, programs: list[str], table: str, config: RunOptions, console_log: Path, resume: str,
                offset: int) -> tuple[BootRead, tuple[str, str]]:
        job = prepare_job(self.kernel, self.initrd, table, len(programs), config, self.lab.files,
                          self.lab.device_type, resume)
        try:
            job_id = self.lab.server.submit(job.definition)
        except LavaError as e:
            self.lab.files.remove(job.initrd_url)
            return read_job("", job, programs, config, Waited(None, False, f"the LAVA job was not submitted: {e}"),
                            console_log, offset), ("", "")
        started = time.monotonic()
        try:
            waited = wait_for(self.lab, job_id, job, config.stop)
            try:
                log_text = self.lab.server.log(job_id)
            except LavaError as e:
                log_text = ""
                waited = Waited(waited.state, waited.timed_out, f"{waited.ended}; its log could not be read: {e}")
        finally:
            self.lab.files.remove(job.initrd_url)
        return (read_job(log_text, job, programs, config, waited, console_log, offset, time.monotonic() - started),
                (str(job_id), self.lab.server.job_url(job_id)))

    def describe(self, config: RunOptions) -> Runner:
        return Runner("lava", config.repeat, self.lab.machine(self.kernel.arch), config.accel.name, config.accel.reason, config.cpus,
                      config.memory_mb)
