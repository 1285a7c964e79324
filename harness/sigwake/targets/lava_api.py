"""A LAVA server through its REST API (v0.2): submit a job, read its state and
log, cancel it. Every request has a deadline; every failure is a LavaError that
says what went wrong in the words a lab admin needs."""

from __future__ import annotations

import datetime
import json
import socket
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

API = "/api/v0.2"
NOT_STARTED = ("Submitted", "Scheduling", "Scheduled")  # LAVA's job states before the worker runs it


class LavaError(Exception):
    """The server could not be reached, refused us, or answered nonsense."""


@dataclass(frozen=True)
class JobState:
    state: str  # Submitted, Scheduling, Scheduled, Running, Canceling, Finished
    health: str  # Unknown, Complete, Incomplete, Canceled
    failure: str  # LAVA's failure comment, if any
    seconds: float | None  # start to end, once both are known

    @property
    def started(self) -> bool:
        return self.state not in NOT_STARTED

    @property
    def finished(self) -> bool:
        return self.state == "Finished"


def base_url(url: str) -> str:
    """The server's root, whatever part of it a user pasted (its web UI, /RPC2, the API)."""
    url = url.rstrip("/")
    for suffix in ("/RPC2", API, "/api", "/scheduler"):
        if url.endswith(suffix):
            url = url[: -len(suffix)]
    return url


def _seconds(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    parse = datetime.datetime.fromisoformat
    return round((parse(end.replace("Z", "+00:00")) - parse(start.replace("Z", "+00:00"))).total_seconds(), 3)


@dataclass(frozen=True)
class LavaServer:
    url: str
    token: str | None = None
    request_timeout_s: float = 30.0

    @property
    def root(self) -> str:
        return base_url(self.url)

    def job_url(self, job_id: int) -> str:
        return f"{self.root}/scheduler/job/{job_id}"

    def _request(self, method: str, path: str, body: dict[str, Any] | None = None, missing_ok: bool = False) -> bytes:
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Token {self.token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(f"{self.root}{API}{path}", data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.request_timeout_s) as answer:
                return answer.read()
        except urllib.error.HTTPError as e:
            if e.code == 404 and missing_ok:
                return b""
            raise LavaError(self._refusal(e.code, e.read().decode(errors="replace"), path)) from None
        except (urllib.error.URLError, socket.timeout, ConnectionError) as e:
            reason = getattr(e, "reason", e)
            raise LavaError(f"LAVA at {self.root} is unreachable: {reason}") from None

    def _refusal(self, code: int, text: str, path: str) -> str:
        try:
            answer = json.loads(text)
            said = answer.get("message") or answer.get("detail") or text if isinstance(answer, dict) else text
        except json.JSONDecodeError:
            said = text.strip().splitlines()[0] if text.strip() else ""
        if code in (401, 403):
            return (f"LAVA at {self.root} refused the token ({said}); give the API token of a user who may "
                    "submit jobs (--token, or SIGWAKE_LAVA_TOKEN)")
        if code == 404 and path == "/system/version/":
            return f"{self.root} answers but has no LAVA REST API at {API} (is it a LAVA server?)"
        return f"LAVA at {self.root} answered {code} to {path}: {said}"

    def _json(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        raw = self._request(method, path, body)
        try:
            answer = json.loads(raw)
        except json.JSONDecodeError:
            raise LavaError(f"LAVA at {self.root} answered {path} with something that is not JSON") from None
        if not isinstance(answer, dict):
            raise LavaError(f"LAVA at {self.root} answered {path} with {type(answer).__name__}, not an object")
        return answer

    def version(self) -> str:
        return str(self._json("GET", "/system/version/").get("version", "unknown"))

    def submit(self, definition: str) -> int:
        answer = self._json("POST", "/jobs/", {"definition": definition})
        ids = answer.get("job_ids")
        if not isinstance(ids, list) or len(ids) != 1:
            raise LavaError(f"LAVA at {self.root} accepted the job but named no single job id: {answer}")
        return int(ids[0])

    def job(self, job_id: int) -> JobState:
        answer = self._json("GET", f"/jobs/{job_id}/")
        return JobState(str(answer.get("state")), str(answer.get("health")), str(answer.get("failure_comment") or ""),
                        _seconds(answer.get("start_time"), answer.get("end_time")))

    def log(self, job_id: int) -> str:
        """The whole log; empty for a job that never ran (LAVA has no log file for it)."""
        return self._request("GET", f"/jobs/{job_id}/logs/", missing_ok=True).decode(errors="replace")

    def cancel(self, job_id: int) -> None:
        self._request("GET", f"/jobs/{job_id}/cancel/")  # LAVA's API cancels on a GET
