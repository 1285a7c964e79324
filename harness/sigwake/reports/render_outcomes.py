"""The stored validate-patch and bisect records as report sections: Markdown lines for matrix.md, and the
rows the HTML page shows (the same words in both)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.exit_codes import FINDING
from ..core.model import KernelResult
from ..core.outcomes import BisectionRecord, Step, ValidationRecord
from ..store.store import BISECTIONS, console_log_path

BootedKernels = dict[str, list[KernelResult]]  # a bisection's name -> the kernels its steps booted, as stored


def validation_heading(v: ValidationRecord) -> str:
    return (f"{v.recorded_at}: {', '.join(v.patches)} on {v.tree} ({v.base} → {v.patched}; passes "
            f"{', '.join(v.passes)}, repeat {v.repeat}): {v.last_line}")


def shown_changes(v: ValidationRecord) -> list[str]:
    """Every kernel report only the patched kernel printed and every change that is a finding, then the rest of
    what changed; unchanged cases are counted, not listed."""
    moved = [c for c in v.changes if c.outcome != "no change"]
    return ([f"kernel report only the patched kernel printed: {title}" for title in v.reports]
            + [str(c) for c in sorted(moved, key=lambda c: not c.is_finding)])


def step_line(s: Step) -> str:
    problem = f" (finding: {s.problem})" if s.problem else ""
    return f"{s.candidate}: {s.note} → {s.mark.value}{problem}"


def bisection_heading(b: BisectionRecord) -> str:
    return f"{b.recorded_at}: {b.subject} over {b.over}: {b.summary.splitlines()[0]}"


def booted_lines(b: BisectionRecord, booted: BootedKernels) -> list[str]:
    """Each kernel the bisection booted: its boot and where its result and console log are kept."""
    folder = Path(BISECTIONS) / b.name
    return [f"booted {k.kernel_id}: boot {k.boot.status}{': ' + k.boot.detail if k.boot.detail else ''} "
            f"({folder / k.kernel_id}.json, {console_log_path(folder, k.kernel_id)})" for k in booted.get(b.name, [])]


def outcome_lines(validations: list[ValidationRecord], bisections: list[BisectionRecord],
                  booted: BootedKernels | None = None) -> list[str]:
    """Markdown sections, newest first; none when nothing is stored."""
    lines: list[str] = []
    if validations:
        lines += ["", "## Patch validations (validate-patch)", ""]
        for v in sorted(validations, key=lambda v: v.recorded_at, reverse=True):
            unchanged = sum(c.outcome == "no change" for c in v.changes)
            lines.append(f"- {validation_heading(v)}; {unchanged} cases unchanged")
            lines += [f"  - {said}" for said in shown_changes(v)]
    if bisections:
        lines += ["", "## Bisections", ""]
        for b in sorted(bisections, key=lambda b: b.recorded_at, reverse=True):
            lines.append(f"- {bisection_heading(b)} ({len(b.steps)} steps)")
            lines += [f"  - {step_line(s)}" for s in b.steps]
            lines += [f"  - {said}" for said in booted_lines(b, booted or {})]
    return lines


def outcome_rows(validations: list[ValidationRecord], bisections: list[BisectionRecord],
                 booted: BootedKernels | None = None) -> dict[str, Any]:
    """What the page's sections show, newest first."""
    return {
        "validations": [{"heading": validation_heading(v), "findings": v.exit_code == FINDING,  # the gate's word
                         "changes": shown_changes(v)}
                        for v in sorted(validations, key=lambda v: v.recorded_at, reverse=True)],
        "bisections": [{"heading": bisection_heading(b), "findings": b.exit_code == FINDING,
                        "steps": [step_line(s) for s in b.steps] + booted_lines(b, booted or {})}
                       for b in sorted(bisections, key=lambda b: b.recorded_at, reverse=True)],
    }
