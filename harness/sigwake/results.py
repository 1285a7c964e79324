"""Result files: results/<kernel-id>.json (written atomically) with the raw console
log beside it, and results/matrix.md regenerated from every result file."""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import expectations
from .verdicts import Verdict

SCHEMA = 1


@dataclass
class ReproResult:
    name: str
    verdict: Verdict
    reason: str = ""
    evidence: dict[str, str] = field(default_factory=dict)
    duration_ms: float | None = None


@dataclass
class BootRecord:
    status: str  # "ok", "timeout", "boot-failed", or "native" (no boot)
    seconds: float | None = None  # QEMU start to exit
    init_uptime_ms: int | None = None  # the guest's uptime when /init started
    detail: str = ""
    rejected_frames: int = 0  # console frames with another token, a bad CRC or a replayed number
    console_tail: str | None = None  # kept when the boot did not end well


@dataclass
class KernelResult:
    kernel_id: str
    release: str | None
    origin: dict[str, str]
    runner: dict[str, Any]  # mode (qemu or native), QEMU version, accelerator and why
    boot: BootRecord
    reproducers: list[ReproResult]
    recorded_at: str
    sigwake_commit: str

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["schema"] = SCHEMA
        for repro in data["reproducers"]:
            repro["verdict"] = str(repro["verdict"])
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> KernelResult:
        repros = [ReproResult(r["name"], Verdict(r["verdict"]), r["reason"], r["evidence"], r["duration_ms"])
                  for r in data["reproducers"]]
        fields = {k: v for k, v in data.items() if k not in ("schema", "reproducers", "boot")}
        return KernelResult(**fields, boot=BootRecord(**data["boot"]), reproducers=repros)

    def mismatches(self) -> list[expectations.Mismatch]:
        release = self.release or ""
        found = (expectations.check(self.kernel_id, release, r.name, r.verdict, r.evidence) for r in self.reproducers)
        return [m for m in found if m is not None]


def atomic_write(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text)
    os.replace(partial, path)


def console_log_path(results_dir: Path, kernel_id: str) -> Path:
    return results_dir / f"{kernel_id}.console.log"


def write_result(results_dir: Path, result: KernelResult) -> Path:
    results_dir.mkdir(parents=True, exist_ok=True)
    path = results_dir / f"{result.kernel_id}.json"
    atomic_write(path, json.dumps(result.to_json(), indent=2) + "\n")
    return path


def load_results(results_dir: Path) -> list[KernelResult]:
    found = []
    for path in sorted(results_dir.glob("*.json")):
        try:
            found.append(KernelResult.from_json(json.loads(path.read_text())))
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path}: not a sigwake result file ({e})") from e
    return found


# The evidence a matrix cell shows, in this order, when the reproducer reported it.
CELL_EVIDENCE = ("records", "pollin", "signals", "si_code")


def cell(repro: ReproResult | None) -> str:
    if repro is None:
        return "–"
    shown = " ".join(f"{k}={repro.evidence[k]}" for k in CELL_EVIDENCE if k in repro.evidence)
    return f"**{repro.verdict}** {shown}".strip()


def _sort_key(result: KernelResult) -> tuple[int, tuple[int, ...], str]:
    numbers = tuple(int(n) for n in re.findall(r"\d+", result.release or result.kernel_id)[:4])
    return (1 if result.runner.get("mode") == "native" else 0, numbers, result.kernel_id)


def _origin(result: KernelResult) -> str:
    o = result.origin
    if o.get("kind") == "debian":
        return f"{o.get('package')} {o.get('version')} ({o.get('suite')})"
    return o.get("path") or o.get("kind") or "?"


def _boot(result: KernelResult) -> str:
    b = result.boot
    if b.status == "native":
        return "native, no boot"
    if b.status != "ok":
        return f"{b.status}: {b.detail}"
    return f"{b.seconds} s to power-off, /init at {b.init_uptime_ms} ms"


def render_matrix(results: list[KernelResult]) -> str:
    ordered = sorted(results, key=_sort_key)
    repros = sorted({r.name for result in ordered for r in result.reproducers})
    lines = [
        "# sigwake matrix",
        "",
        "Regenerated from the result files beside it. Verdicts: delivered, not-delivered (record written and "
        "POLLIN, but no signal), unsupported, error, timeout, boot-failed. Evidence: records written, poll "
        "readiness, signals received, si_code of the first (1 = POLL_IN).",
        "",
        "| kernel | release | runner | " + " | ".join(repros) + " | vs. expectations |",
        "|---|---|---|" + "---|" * len(repros) + "---|",
    ]
    for result in ordered:
        by_name = {r.name: r for r in result.reproducers}
        runner = result.runner.get("mode", "?")
        if runner == "qemu":
            runner = f"qemu/{result.runner.get('accel', '?')}"
        mismatches = result.mismatches()
        verdict = "as expected" if not mismatches else "; ".join(f"{m.repro}: {m.kind}" for m in mismatches)
        cells = " | ".join(cell(by_name.get(name)) for name in repros)
        lines.append(f"| {result.kernel_id} | {result.release or '?'} | {runner} | {cells} | {verdict} |")
    lines += ["", "| kernel | from | sha256 | boot | runner |", "|---|---|---|---|---|"]
    for result in ordered:
        sha = (result.origin.get("sha256") or "")[:12] or "–"
        r = result.runner
        runner = f"{r.get('qemu', '?')}; {r.get('accel', '?')}: {r.get('accel_reason', '?')}" if r.get("mode") == "qemu" else "native"
        lines.append(f"| {result.kernel_id} | {_origin(result)} | {sha} | {_boot(result)} | {runner} |")
    lines += ["", "Expectations and their sources:", ""]
    lines += [f"- `{row.repro}`: {row.source}" for row in expectations.TABLE]
    return "\n".join(lines) + "\n"


def write_matrix(results_dir: Path) -> Path:
    path = results_dir / "matrix.md"
    atomic_write(path, render_matrix(load_results(results_dir)))
    return path
