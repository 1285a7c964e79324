"""Every report format, rendered from the stored results alone (no re-run): each
render_*.py module with a FORMAT (report_input.Format) is one, found here, so a
new format is one new file. `run` writes them all; `sigwake report` writes them
again or prints one."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from ..core.atomic import atomic_write
from ..programs.catalogue import Catalogue
from .report_input import Format, ReportInput, ReportOptions, load_input

__all__ = ["FORMATS", "ReportOptions", "load_input", "render", "render_given", "write_given", "write_reports"]


def _formats() -> dict[str, Format]:
    package = Path(__file__).parent
    found = [getattr(importlib.import_module(f"{__package__}.{m.name}"), "FORMAT", None)
             for m in pkgutil.iter_modules([str(package)]) if m.name.startswith("render_")]
    return {f.name: f for f in sorted((f for f in found if isinstance(f, Format)), key=lambda f: f.order)}


REGISTRY = _formats()
FORMATS = tuple(REGISTRY)


def render_given(given: ReportInput, fmt: str) -> str:
    """One format as text (KTAP: every kernel's document, one after the other)."""
    if fmt not in REGISTRY:
        raise ValueError(f"no report format {fmt!r}; there are {', '.join(FORMATS)}")
    return "".join(REGISTRY[fmt].render(given).values())


def render(results_dir: Path, fmt: str, options: ReportOptions, catalogue: Catalogue) -> str:
    return render_given(load_input(results_dir, options, catalogue), fmt)


def write_given(given: ReportInput) -> list[Path]:
    """Every format's files beside the results (matrix.md, ktap/<kernel>.ktap, junit.xml,
    kcidb/submission.json, index.html: none a *.json at the top, which are the result files)."""
    written = []
    for fmt in REGISTRY.values():
        for name, text in fmt.render(given).items():
            if name:
                (given.results_dir / name).parent.mkdir(parents=True, exist_ok=True)
                written.append(atomic_write(given.results_dir / name, text))
    return written


def write_reports(results_dir: Path, options: ReportOptions, catalogue: Catalogue) -> list[Path]:
    return write_given(load_input(results_dir, options, catalogue))
