"""A LAVA job for one kernel: the boot a local QEMU gets (the kernel, the run's
initramfs plus a fresh token, the same command line and deadlines), written for
LAVA's own qemu device type (deploy to tmpfs, boot method qemu) with a monitor
that gives LAVA its own view of each run: pass where the run's verdict is what is known of the kernel
(the table judge/lava_results.py writes, in the job's initramfs). Writing a job runs nothing."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import yaml

from . import qemu
from ..core import protocol
from ..core.atomic import atomic_write
from .options import RunOptions
from .boot_image import boot_arguments, write_boot_initrd
from ..kernels.kernels import Kernel

DEPLOY_TIMEOUT_S = 600  # the worker downloads the kernel and the initramfs
BOOT_ACTION_S = 120  # with no prompts LAVA's boot action only starts QEMU; the kernel's boot counts in the test
JOB_MARGIN_S = 120  # LAVA's own start and finish around the actions


@dataclass(frozen=True)
class LavaFiles:
    """Where jobs' kernels and initramfs files are put, and the URL a LAVA worker downloads them
    from: file:// when the worker shares this filesystem, else the web server that serves it."""

    directory: Path
    url: str

    def publish(self, source: Path, name: str) -> str:
        self.directory.mkdir(parents=True, exist_ok=True)
        target = self.directory / name
        if not target.exists():
            partial = target.with_name(f".{name}.{os.getpid()}.partial")
            try:
                os.link(source, partial)  # the kernel cache is usually on the same filesystem
            except OSError:
                shutil.copyfile(source, partial)
            os.replace(partial, target)
        return self.url_of(name)

    def url_of(self, name: str) -> str:
        return f"{self.url.rstrip('/')}/{quote(name, safe='+')}"  # '+' kept: LAVA does not unquote file: URLs

    def remove(self, url: str) -> None:
        (self.directory / url.rsplit("/", 1)[-1]).unlink(missing_ok=True)


def default_files(directory: Path, url: str | None = None) -> LavaFiles:
    """Files in `directory`, fetched by workers from `url` (default: its file: URL, for a worker here)."""
    return LavaFiles(directory, url or directory.resolve().as_uri())


@dataclass(frozen=True)
class PreparedJob:
    kernel_id: str
    token: str  # the boot's frame token, in its initramfs: the log is parsed with it
    definition: str  # YAML, as submitted
    timeout_s: float  # the job's own timeout in LAVA
    initrd_url: str  # this job's own initramfs (its token), removed once the job is read back


def monitor(token: str) -> dict[str, object]:
    """LAVA records each run the guest judged (`# sigwake.lava=pass watermark_sigio.watermark_sigio [root run
    1]`) as a test case of its own, the pass and run in its name; sigwake reads the whole log back and
    judges it with its own parser. The name must end in its ']': LAVA matches as the console arrives, and a
    line cut short must not match."""
    frame = rf"SIGWAKE {token} \d+ [0-9a-f]+"
    key = re.escape(protocol.REPORT["lava"])
    return {
        "name": "sigwake",
        "start": f"SIGWAKE {token} 0 ",
        "end": rf"{frame} # {re.escape(protocol.REPORT['done'])}=",
        "pattern": rf"{frame} # {key}=(?P<result>pass|fail|skip) (?P<test_case_id>\S+ \[\S+ run \d+\])",
    }


def job_definition(kernel_id: str, kernel_url: str, initrd_url: str, token: str, config: RunOptions,
                   programs: int, device_type: str, arch: str = "amd64", resume: str = "") -> tuple[dict[str, object], float]:
    """The job and its timeout: LAVA's qemu device type with our QEMU options as context; `resume`: a fresh boot's
    (the runs after that one, fresh_boots.py)."""
    test_s = config.timeout_for(programs)
    job_s = DEPLOY_TIMEOUT_S + BOOT_ACTION_S + test_s + JOB_MARGIN_S
    command_line = " ".join((*qemu.base_append(arch), *boot_arguments(config, resume=resume)))
    context: dict[str, object] = {"arch": arch, "memory": config.memory_mb,
                                  "extra_options": [f"-smp {config.cpus}", "-no-reboot"]}
    if config.accel.name == "tcg":
        context["no_kvm"] = True  # else the device type asks for -enable-kvm -cpu host
    job = {
        "job_name": f"sigwake {kernel_id}",
        "device_type": device_type,
        "visibility": "public",
        "priority": "medium",
        "context": context,
        "timeouts": {"job": {"seconds": int(job_s)}, "action": {"seconds": int(test_s)}},
        "actions": [
            {"deploy": {"to": "tmpfs", "timeout": {"seconds": DEPLOY_TIMEOUT_S}, "images": {
                "kernel": {"url": kernel_url, "image_arg": f'-kernel {{kernel}} -append "{command_line}"'},
                "initrd": {"url": initrd_url, "image_arg": "-initrd {initrd}"}}}},
            {"boot": {"method": "qemu", "media": "tmpfs", "timeout": {"seconds": BOOT_ACTION_S}}},
            {"test": {"timeout": {"seconds": int(test_s)}, "monitors": [monitor(token)]}},
        ],
    }
    return job, job_s


def prepare_job(kernel: Kernel, initrd: Path, table: str, programs: int, config: RunOptions, files: LavaFiles,
                device_type: str, resume: str = "") -> PreparedJob:
    """Publishes the kernel (once per image) and this job's initramfs (its token, and `table`: what LAVA shows
    for each run), and writes the definition."""
    assert kernel.image is not None, "the host kernel runs natively"
    token = secrets.token_hex(8)
    kernel_url = files.publish(kernel.image, f"{kernel.origin.sha256 or kernel.id}.vmlinuz")
    files.directory.mkdir(parents=True, exist_ok=True)
    boot_initrd = files.directory / f"{kernel.id}-{token}.cpio"
    write_boot_initrd(initrd, token, boot_initrd, table)
    initrd_url = files.url_of(boot_initrd.name)
    job, timeout_s = job_definition(kernel.id, kernel_url, initrd_url, token, config, programs, device_type,
                                    kernel.arch, resume)
    return PreparedJob(kernel.id, token, yaml.safe_dump(job, sort_keys=False), timeout_s, initrd_url)


def write_jobs(jobs: list[PreparedJob], out_dir: Path) -> list[Path]:
    """<kernel-id>.yaml per job, and jobs.json naming each job's token (to parse its log later)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [atomic_write(out_dir / f"{job.kernel_id}.yaml", job.definition) for job in jobs]
    manifest = {job.kernel_id: {"definition": f"{job.kernel_id}.yaml", "token": job.token,
                                "timeout_s": job.timeout_s} for job in jobs}
    paths.append(atomic_write(out_dir / "jobs.json", json.dumps(manifest, indent=2) + "\n"))
    return paths
