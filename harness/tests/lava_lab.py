"""A real LAVA lab on this machine, for the tests: Debian's lava-server (gunicorn,
the scheduler) on a private PostgreSQL cluster, and a lava-worker, started
directly (no systemd here), each in a scratch directory, every wait bounded.
Nothing of the system's LAVA or PostgreSQL configuration is touched."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from sigwake.core.model import LOST_IN_TRANSPORT, BootRecord, ReproResult

PG_BIN = Path("/usr/lib/postgresql")
AS_POSTGRES = ("setpriv", "--reuid", "postgres", "--regid", "postgres", "--clear-groups", "--")
DIE_WITH_US = ("setpriv", "--pdeathsig", "KILL", "--")  # no daemon outlives the test session
ADMIN_TOKEN = "sigwake-test-admin-token"
TYPES = ("qemu", "qemu-aarch64")  # the second has one device, on a worker that never comes: jobs wait


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pg_bin() -> Path:
    versions = sorted(PG_BIN.glob("*/bin/pg_ctl"))
    if not versions:
        raise RuntimeError("no PostgreSQL server binaries under /usr/lib/postgresql (package postgresql)")
    return versions[-1].parent


@dataclass
class LocalLava:
    root: Path
    pg_port: int = field(default_factory=free_port)
    http_port: int = field(default_factory=free_port)
    daemons: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    def env(self) -> dict[str, str]:
        settings = {"MEDIA_ROOT": self.root / "media", "DEVICES_PATH": self.root / "devices",
                    "HEALTH_CHECKS_PATH": self.root / "health-checks", "DJANGO_LOGFILE": self.root / "log/django.log"}
        return {**os.environ, "DATABASE_URL": f"postgres://lava@127.0.0.1:{self.pg_port}/lava",
                "SECRET_KEY": "sigwake-test", "DJANGO_SETTINGS_MODULE": "lava_server.settings.prod",
                **{f"LAVA_SETTINGS_{k}": str(v) for k, v in settings.items()}}

    def manage(self, *args: str) -> str:
        done = subprocess.run(["lava-server", "manage", *args], env=self.env(), capture_output=True, text=True,
                              timeout=300)
        if done.returncode != 0:
            raise RuntimeError(f"lava-server manage {' '.join(args)}: {done.stderr[-2000:]}")
        return done.stdout

    def start_postgres(self) -> None:
        data, sockets = self.root / "pg", self.root / "pg-sockets"
        for d in (data, sockets):
            d.mkdir()
            shutil.chown(d, "postgres", "postgres")
        bin_dir = pg_bin()
        subprocess.run([*AS_POSTGRES, bin_dir / "initdb", "-D", data, "-U", "lava", "--auth", "trust"],
                       check=True, capture_output=True, timeout=120)
        subprocess.run([*AS_POSTGRES, bin_dir / "pg_ctl", "-D", data, "-l", data / "server.log", "-w", "-t", "60",
                        "-o", f"-p {self.pg_port} -k {sockets} -c listen_addresses=127.0.0.1", "start"],
                       check=True, capture_output=True, timeout=90)
        subprocess.run([*AS_POSTGRES, bin_dir / "createdb", "-h", "127.0.0.1", "-p", str(self.pg_port), "-U", "lava",
                        "lava"], check=True, capture_output=True, timeout=60)

    def daemon(self, name: str, *argv: str) -> None:
        log = (self.root / "log" / f"{name}.out").open("wb")
        self.daemons.append(subprocess.Popen([*DIE_WITH_US, *argv], env=self.env(), cwd=self.root, stdout=log,
                                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))

    def api(self, path: str) -> object:
        request = urllib.request.Request(f"{self.url}/api/v0.2{path}", headers={"Authorization": f"Token {ADMIN_TOKEN}"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())

    def wait_until(self, what: str, ready: object, timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if ready():  # type: ignore[operator]
                    return
            except OSError:
                pass  # not listening yet
            time.sleep(0.5)
        logs = "\n".join(f"{p.name}: {p.read_text(errors='replace')[-1500:]}" for p in (self.root / "log").iterdir())
        raise RuntimeError(f"the local LAVA lab: {what} not within {timeout_s:.0f} s\n{logs}")

    def start(self) -> LocalLava:
        for d in ("log", "media", "devices", "health-checks", "worker"):
            (self.root / d).mkdir()
        self.start_postgres()
        self.manage("migrate", "--no-input")
        self.manage("users", "add", "--superuser", "--staff", "--passwd", "sigwake", "admin")
        self.manage("tokens", "add", "--user", "admin", "--secret", ADMIN_TOKEN)
        for device_type in TYPES:
            self.manage("device-types", "add", device_type)
        worker_token = self.manage("workers", "add", "--health", "ACTIVE", "worker1").split("Token:")[1].strip()
        self.manage("workers", "add", "--health", "ACTIVE", "never-online")
        for device, device_type, worker in (("qemu01", "qemu", "worker1"), ("qemu02", "qemu", "worker1"),
                                            ("arm01", "qemu-aarch64", "never-online")):
            (self.root / "devices" / f"{device}.jinja2").write_text(f"{{% extends '{device_type}.jinja2' %}}\n")
            self.manage("devices", "add", "--device-type", device_type, "--worker", worker, device)
        self.daemon("gunicorn", "gunicorn3", "lava_server.wsgi", "--bind", f"127.0.0.1:{self.http_port}",
                    "--workers", "2", "--timeout", "120")
        self.daemon("scheduler", "lava-server", "manage", "lava-scheduler", "--level", "DEBUG")
        self.daemon("worker", "lava-worker", "--level", "DEBUG", "--url", f"{self.url}/", "--name", "worker1",
                    "--token", worker_token, "--worker-dir", str(self.root / "worker"))
        self.wait_until("the API", lambda: self.api("/system/version/"))
        self.wait_until("worker1 online", lambda: self.api("/workers/worker1/")["state"] == "Online")  # type: ignore[index]
        return self

    def stop(self) -> None:
        for daemon in self.daemons:
            daemon.send_signal(signal.SIGTERM)
        for daemon in self.daemons:
            try:
                daemon.wait(timeout=20)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
        if (self.root / "pg" / "PG_VERSION").exists():
            subprocess.run([*AS_POSTGRES, pg_bin() / "pg_ctl", "-D", self.root / "pg", "-m", "immediate", "-w",
                            "stop"], capture_output=True, timeout=60)


def local_lava() -> LocalLava:
    """A scratch directory the postgres user can reach (pytest's own are root-only)."""
    root = Path(tempfile.mkdtemp(prefix="sigwake-lava-"))
    root.chmod(0o755)
    return LocalLava(root)


def differences_from_local(boot: BootRecord, lab: list[ReproResult], local: list[ReproResult]) -> list[str]:
    """Each case a lab judged otherwise than the local run. LAVA's log has been seen to tear a frame (a printk
    line spliced in, characters lost): a case whose run tore, which says so, is left out of the comparison,
    but the boot must say frames were lost, and no more than a few cases may tear."""
    torn = {(c.privilege, c.name) for c in lab if LOST_IN_TRANSPORT in c.reason}
    assert boot.status == "ok" and boot.rejected_frames <= 2, boot.detail
    assert len(torn) <= 3 and (not torn or "framed lines lost or torn" in boot.detail), torn
    theirs = {(c.privilege, c.name): c for c in local}
    assert {(c.privilege, c.name) for c in lab} == set(theirs)
    return [f"[{c.privilege}] {c.name}: {c.verdict} ({c.reason}) where locally {theirs[(c.privilege, c.name)].verdict}"
            for c in lab if c.verdict is not theirs[(c.privilege, c.name)].verdict and (c.privilege, c.name) not in torn]
