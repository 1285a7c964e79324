"""Every report format, rendered from the stored results alone (no re-run): the
Markdown matrix, KTAP per kernel, JUnit XML, KCIDB JSON, the HTML page, and the
terminal summary; the matrix and the page also show the stored validate-patch
and bisect records. `run` writes them all; `sigwake report` writes them again or
prints one."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from .atomic import atomic_write
from .render_html import render_html
from .render_junit import render_junit
from .render_kcidb import render_kcidb
from .render_ktap import render_ktap
from .render_markdown import render_matrix
from .render_summary import render_summary
from .model import QaLine
from .store import load_bisections, load_qa, load_results, load_validations

FORMATS = ("summary", "markdown", "ktap", "junit", "kcidb", "html")


@dataclass(frozen=True)
class ReportOptions:
    kcidb_origin: str = "sigwake"
    log_base_url: str | None = None  # where the console logs will be served; default: file: URLs


def qa_lines(results_dir: Path, unreadable: list[str]) -> list[QaLine]:
    """The last `sigwake qa`'s lines, if it ran here; an unreadable file is named with the others."""
    try:
        return load_qa(results_dir)
    except ValueError as e:
        unreadable.append(str(e))
        return []


def render(results_dir: Path, fmt: str, options: ReportOptions) -> str:
    """One format as text (KTAP: every kernel's document, one after the other)."""
    loaded = load_results(results_dir)
    kernels = loaded.results
    if fmt == "summary":
        return render_summary(kernels) + "".join(f"unreadable: {u}\n" for u in loaded.unreadable)
    if fmt == "markdown":
        return render_matrix(kernels, loaded.unreadable, load_validations(results_dir, loaded.unreadable),
                             load_bisections(results_dir, loaded.unreadable))
    if fmt == "ktap":
        return "".join(render_ktap(k) for k in kernels)
    if fmt == "junit":
        return render_junit(kernels)
    if fmt == "kcidb":
        return json.dumps(render_kcidb(kernels, results_dir, options.kcidb_origin, options.log_base_url), indent=2) + "\n"
    if fmt == "html":
        return render_html(kernels, loaded.unreadable, qa_lines(results_dir, loaded.unreadable),
                           load_validations(results_dir, loaded.unreadable),
                           load_bisections(results_dir, loaded.unreadable))
    raise ValueError(f"no report format {fmt!r}; there are {', '.join(FORMATS)}")


def write_reports(results_dir: Path, options: ReportOptions) -> list[Path]:
    """Every file format beside the results: matrix.md, ktap/<kernel>.ktap, junit.xml, kcidb/submission.json
    (not beside the result files: those are every *.json there), index.html."""
    loaded = load_results(results_dir)
    kernels = loaded.results
    validations = load_validations(results_dir, loaded.unreadable)
    bisections = load_bisections(results_dir, loaded.unreadable)
    written = [atomic_write(results_dir / "matrix.md", render_matrix(kernels, loaded.unreadable, validations,
                                                                     bisections))]
    (results_dir / "ktap").mkdir(exist_ok=True)
    written += [atomic_write(results_dir / "ktap" / f"{k.kernel_id}.ktap", render_ktap(k)) for k in kernels]
    written.append(atomic_write(results_dir / "junit.xml", render_junit(kernels)))
    kcidb = render_kcidb(kernels, results_dir, options.kcidb_origin, options.log_base_url)
    (results_dir / "kcidb").mkdir(exist_ok=True)
    written.append(atomic_write(results_dir / "kcidb" / "submission.json", json.dumps(kcidb, indent=2) + "\n"))
    qa = qa_lines(results_dir, loaded.unreadable)
    written.append(atomic_write(results_dir / "index.html", render_html(kernels, loaded.unreadable, qa, validations,
                                                                        bisections)))
    return written
