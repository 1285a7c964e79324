"""What every report format is rendered from, and what a format is: a name, its place among the others, and
one function from the stored results to its files. Each render_*.py module that is a format says so with a
FORMAT of its own; report.py finds them, so a new format is one new file."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..programs.catalogue import Catalogue
from ..core.model import KernelResult, QaLine
from ..core.outcomes import BisectionRecord, ValidationRecord
from ..store.store import bisection_kernels, load_bisections, load_qa, load_results, load_validations


@dataclass(frozen=True)
class ReportOptions:
    kcidb_origin: str = "sigwake"
    log_base_url: str | None = None  # where the console logs will be served; default: file: URLs


@dataclass(frozen=True)
class ReportInput:
    results_dir: Path
    kernels: list[KernelResult]
    unreadable: list[str]  # stored files that could not be read, and why
    qa: list[QaLine]
    validations: list[ValidationRecord]
    bisections: list[BisectionRecord]
    options: ReportOptions
    catalogue: Catalogue  # the cases' facts: what each is judged against and what its cells show
    booted: dict[str, list[KernelResult]] = field(default_factory=dict)  # a bisection's name -> its kernels


@dataclass(frozen=True)
class Format:
    name: str  # as --format takes it
    order: int  # its place in the list of formats
    render: Callable[[ReportInput], dict[str, str]]  # path under the results folder -> text ("": printed only)


def load_input(results_dir: Path, options: ReportOptions, catalogue: Catalogue) -> ReportInput:
    """Everything stored in a results folder; each file that cannot be read is named in `unreadable`."""
    loaded = load_results(results_dir)
    unreadable = loaded.unreadable
    try:
        qa = load_qa(results_dir)
    except ValueError as e:
        unreadable.append(str(e))
        qa = []
    bisections = load_bisections(results_dir, unreadable)
    booted = {}
    for record in bisections:  # the kernels each one's steps booted, kept beside it
        folder = bisection_kernels(results_dir, record)
        if folder.is_dir():
            kept = load_results(folder)
            unreadable += kept.unreadable
            booted[record.name] = kept.results
    return ReportInput(results_dir, loaded.results, unreadable, qa, load_validations(results_dir, unreadable),
                       bisections, options, catalogue, booted)
