"""results/index.html: one self-contained page a QA person would rather look at than
read. The kernel x case matrix per privilege pass, each cell coloured by how it
reads against the expectations and linked to its evidence, and a picture of the
watermark verdict across kernels in version order with the boundary drawn. Jinja2
(Debian's python3-jinja2) fills the template and escapes what it fills in; the
picture is inline SVG: no script, no second file, and every point is an element a
browser test can find."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2

from ..programs.catalogue import Catalogue
from ..judge.gate import of_run, unread
from ..judge.judgement import shown
from ..judge.refused_passes import shown_passes
from ..judge.peers import compare
from ..core.model import KernelResult, QaLine
from ..core.outcomes import BisectionRecord, ValidationRecord
from .render_markdown import FOLDED, refused_line
from .render_outcomes import BootedKernels, outcome_rows
from ..judge.expectations import HEADLINE
from ..store.store import console_log_path
from .report_input import Format

COLOURS = {"delivered": "#2e9b2e", "not-delivered": "#c0392b"}


PER_ROW = 6  # kernels on a row of the picture: six fit a 1400 px page with its margins


def _picture(ordered: list[KernelResult]) -> dict[str, Any]:
    """The headline verdict kernel by kernel in version order, in rows that fit the page, and the line where
    the signal starts to arrive: before the first delivering kernel that follows a not-delivering one (at the
    start of its row when it opens one)."""
    points = []
    for index, kernel in enumerate(ordered):
        root = next((c for c in kernel.reproducers if c.name == HEADLINE and c.privilege == "root"), None)
        verdict = str(root.verdict) if root else "not run"
        points.append({"kernel": kernel.kernel_id, "verdict": verdict, "x": 90 + (index % PER_ROW) * 190,
                       "y": 140 * (index // PER_ROW), "colour": COLOURS.get(verdict, "#999")})
    # Between kernels that said delivered or not-delivered: a boot that failed or a split says nothing of when.
    judged = [p for p in points if p["verdict"] in ("delivered", "not-delivered")]
    boundary = next(({"x": max(after["x"] - 95, 25), "y": after["y"]} for before, after in zip(judged, judged[1:])
                     if before["verdict"] == "not-delivered" and after["verdict"] == "delivered"), None)
    rows = max((len(points) + PER_ROW - 1) // PER_ROW, 1)
    return {"points": points, "boundary": boundary, "width": 90 + 190 * min(max(len(points), 1), PER_ROW),
            "height": 140 * rows, "rows": [140 * r for r in range(rows)]}


def render_html(kernels: list[KernelResult], catalogue: Catalogue, unreadable: list[str] | None = None,
                qa: list[QaLine] | None = None, validations: list[ValidationRecord] | None = None,
                bisections: list[BisectionRecord] | None = None, booted: BootedKernels | None = None) -> str:
    ordered = sorted(kernels, key=KernelResult.order)
    listed = [{p.privilege: p for p in shown_passes(k, catalogue)} for k in ordered]
    privileges = list(dict.fromkeys(p for passes_of in listed for p in passes_of))
    passes = []
    for privilege in privileges:
        shown_here = [of.get(privilege) for of in listed]
        refused = [refused_line(kernel.kernel_id, p.refused) for kernel, p in zip(ordered, shown_here)
                   if p is not None and p.refused is not None]
        folded = [set(p.refused.names()) if p is not None and p.refused else set() for p in shown_here]
        by_kernel = [{j.name: j for j in p.cases} if p is not None else {} for p in shown_here]
        rows = []
        for case in sorted({name for cells in by_kernel for name in cells}):
            cells: list[dict[str, str] | None] = []
            for kernel, found, away in zip(ordered, by_kernel, folded):
                j = found.get(case)
                cells.append({"outcome": "refused", "verdict": FOLDED, "why": "", "evidence": "",
                              "href": f"{kernel.kernel_id}.json"} if case in away else None if j is None else {
                    "outcome": str(j.outcome), "verdict": str(j.case.verdict), "why": j.why or j.case.reason,
                    "evidence": " ".join(f"{k}={j.case.evidence[k]}" for k in catalogue.shown(case) if k in j.case.evidence),
                    "href": f"{kernel.kernel_id}.json"})
            rows.append({"case": case, "cells": cells})
        passes.append({"privilege": privilege, "refused": refused, "rows": rows})
    judged_run = of_run(ordered, catalogue, unread(unreadable or []))
    splats = [{"kernel": k.kernel_id, "title": s.title, "kind": s.kind, "where": s.where(), "line": s.console_line,
               "fatal": s.fatal, "tainted": f"{s.tainted_before} → {s.tainted_after}" if s.tainted_after else "",
               "log": console_log_path(Path("."), k.kernel_id).name} for k in ordered for s in k.splats]
    peers = [{"kernel": k.kernel_id, "test": f"{c.peer.program}: {c.peer.test}", "result": c.peer.result,
              "detail": c.peer.detail, "case": c.against,
              "agrees": c.word} for k in ordered for c in compare(k, catalogue)]
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                                      autoescape=True, undefined=jinja2.StrictUndefined)
    return environment.get_template("report.html.j2").render(
        kernels=[{"id": k.kernel_id, "log": console_log_path(Path("."), k.kernel_id).name,
                  "partial": k.runner.partial()} for k in ordered],
        passes=passes, picture=_picture(ordered), findings=shown(judged_run.findings, ordered), count=judged_run.last_line(),
        splats=splats,
        peers=peers,
        unreadable=unreadable or [], commits=_commits(ordered), qa=qa or [],
        outcomes=outcome_rows(validations or [], bisections or [], booted))


def _commits(kernels: list[KernelResult]) -> str:
    """Which sigwake commit ran which kernels: one commit named alone; several, each with its kernels (their
    count past three)."""
    by_commit: dict[str, list[str]] = {}
    for k in kernels:
        by_commit.setdefault(k.sigwake_commit, []).append(k.kernel_id)
    if len(by_commit) <= 1:
        return f"sigwake {next(iter(by_commit), 'no results')}"
    return "sigwake " + "; ".join(f"{commit} for {', '.join(ids) if len(ids) <= 3 else f'{len(ids)} kernels'}"
                                  for commit, ids in sorted(by_commit.items(), key=lambda item: -len(item[1])))


FORMAT = Format("html", 6, lambda given: {"index.html": render_html(given.kernels, given.catalogue, given.unreadable, given.qa,
                                                                    given.validations, given.bisections, given.booted)})
