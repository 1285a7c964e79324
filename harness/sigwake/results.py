"""Result files: results/<kernel-id>.json (written atomically) with the raw console
log beside it, and results/matrix.md regenerated from every result file."""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import expectations
from .verdicts import Verdict

SCHEMA = 1


@dataclass
class ReproResult:
    """One reproducer case at one privilege level, over its repeated runs."""

    name: str
    verdict: Verdict
    reason: str = ""
    evidence: dict[str, str] = field(default_factory=dict)  # of the first run (of the rarer outcome when flaky)
    duration_ms: float | None = None  # median in-guest milliseconds of the program that ran it
    privilege: str = "root"  # root, or user-paranoidN: uid 65534 with perf_event_paranoid N
    runs: dict[str, int] = field(default_factory=dict)  # verdict -> how many runs reached it
    kernel_path: dict[str, str] = field(default_factory=dict)  # function -> calls for our events, or why unavailable


@dataclass
class BootRecord:
    status: str  # "ok", "timeout", "boot-failed", or "native" (no boot)
    seconds: float | None = None  # QEMU start to exit
    init_uptime_ms: int | None = None  # the guest's uptime when /init started
    detail: str = ""
    rejected_frames: int = 0  # console frames with another token, a bad CRC or a replayed number
    console_tail: str | None = None  # kept when the boot did not end well
    pass_seconds: dict[str, float] = field(default_factory=dict)  # in-guest time of each privilege pass
    warnings: list[str] = field(default_factory=list)  # what the guest init warned of


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
    paranoid: dict[str, str] = field(default_factory=dict)  # privilege pass -> perf_event_paranoid

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["schema"] = SCHEMA
        for repro in data["reproducers"]:
            repro["verdict"] = str(repro["verdict"])
        return data

    @staticmethod
    def from_json(data: dict[str, Any]) -> KernelResult:
        repros = [ReproResult(r["name"], Verdict(r["verdict"]), r["reason"], r["evidence"], r["duration_ms"],
                              r.get("privilege", "root"), r.get("runs", {}), r.get("kernel_path", {}))
                  for r in data["reproducers"]]
        fields = {k: v for k, v in data.items() if k not in ("schema", "reproducers", "boot")}
        return KernelResult(**fields, boot=BootRecord(**data["boot"]), reproducers=repros)

    def mismatches(self) -> list[expectations.Mismatch]:
        release, origin = self.release or "", self.origin.get("kind", "")
        found = (expectations.check(self.kernel_id, release, r.name, r.verdict, r.evidence, r.privilege, origin)
                 for r in self.reproducers)
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
CELL_EVIDENCE = ("records", "pollin", "signals", "si_code", "target_signals", "source_signals", "crossings",
                 "buffers", "predicted_buffers")


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


def path_cell(repro: ReproResult | None) -> str:
    if repro is None or not repro.kernel_path:
        return "–"
    return " → ".join(v if v.isdigit() else "n/a" for v in repro.kernel_path.values())


def case_table(ordered: list[KernelResult], privilege: str, render: Callable[[ReproResult | None, bool], str],
               mismatches: list[list[expectations.Mismatch]] | None = None) -> list[str]:
    """One row per case, one column per kernel: render(result, whether it is among the kernel's mismatches)."""
    lines = ["| reproducer | " + " | ".join(r.kernel_id for r in ordered) + " |", "|---|" + "---|" * len(ordered)]
    by_kernel = [{r.name: r for r in result.reproducers if r.privilege == privilege} for result in ordered]
    differing = [{m.repro for m in found if m.privilege == privilege} for found in mismatches or [[] for _ in ordered]]
    for name in sorted({name for cells in by_kernel for name in cells}):
        row = (render(cells.get(name), name in wrong) for cells, wrong in zip(by_kernel, differing))
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    return lines


def kernel_path_table(ordered: list[KernelResult]) -> list[str]:
    """The root pass's kernel-path counts: where each chain went, and where it stopped."""
    functions: list[str] = next(
        (list(r.kernel_path) for result in ordered for r in result.reproducers if r.kernel_path), [])
    if not functions:
        return []
    return ["", "## Kernel path (root)", "",
            "Calls, for the reproducer's own perf events, of: " + " → ".join(functions) +
            " (n/a: the kernel lacks kprobes, BTF or the symbol; the reason is in the result file).", "",
            *case_table(ordered, "root", lambda repro, _: path_cell(repro))]


def render_matrix(results: list[KernelResult]) -> str:
    ordered = sorted(results, key=_sort_key)
    mismatches = [result.mismatches() for result in ordered]
    privileges = list(dict.fromkeys(r.privilege for result in ordered for r in result.reproducers))
    lines = [
        "# sigwake matrix",
        "",
        "Regenerated from the result files beside it. Verdicts: delivered, not-delivered (record written and "
        "POLLIN, but no signal), unsupported, measured (a figure), flaky (repeated runs disagreed), error, "
        "timeout, boot-failed. Evidence: records written, poll readiness, signals received, si_code of the first "
        "(1 = POLL_IN). A cell marked ≠ differs from the expectations table (see the end).",
    ]
    for privilege in privileges:
        lines += ["", f"## {privilege}", ""]
        lines += case_table(ordered, privilege, lambda repro, differs: ("≠ " if differs else "") + cell(repro),
                            mismatches)

    lines += kernel_path_table(ordered)
    lines += ["", "## Kernels", "", "| kernel | release | from | sha256 | boot | perf_event_paranoid per pass | runner |",
              "|---|---|---|---|---|---|---|"]
    for result in ordered:
        sha = (result.origin.get("sha256") or "")[:12] or "–"
        r = result.runner
        runner = f"{r.get('qemu', '?')}; {r.get('accel', '?')}: {r.get('accel_reason', '?')}" \
            if r.get("mode") == "qemu" else "native"
        paranoid = ", ".join(f"{k}: {v}" for k, v in result.paranoid.items()) or "–"
        lines.append(f"| {result.kernel_id} | {result.release or '?'} | {_origin(result)} | {sha} | {_boot(result)} "
                     f"| {paranoid} | {runner} |")

    differences = [m for found in mismatches for m in found]
    lines += ["", "## Differences from the expectations table", ""]
    lines += [f"- {m}" for m in differences] or ["None."]
    lines += ["", "## Expectations and their sources", ""]
    grouped: dict[tuple[str, str], list[str]] = {}
    for expectation in expectations.TABLE:
        scope = [f"passes {', '.join(expectation.privileges)}" if expectation.privileges else "",
                 f"{', '.join(expectation.origins)} kernels" if expectation.origins else ""]
        where = f" ({'; '.join(filter(None, scope))})" if any(scope) else ""
        grouped.setdefault((where, expectation.source), []).append(f"`{expectation.repro}`")
    lines += [f"- {', '.join(cases)}{where}: {source}" for (where, source), cases in grouped.items()]
    return "\n".join(lines) + "\n"


def write_matrix(results_dir: Path) -> Path:
    path = results_dir / "matrix.md"
    atomic_write(path, render_matrix(load_results(results_dir)))
    return path
