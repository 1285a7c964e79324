"""The Markdown matrix (results/matrix.md): one table per privilege pass, kernels
as columns, each cell a verdict with its evidence, and every difference from the
expectations table named; regenerated from the stored results alone."""

from __future__ import annotations

from collections import Counter
from typing import Callable

from ..judge import expectations
from ..programs.catalogue import Catalogue
from ..judge.gate import of_run, unread
from ..judge.judgement import FINDING_KINDS, Finding, judged_cases, shown, unjudged, untested
from ..judge.peers import compare
from ..judge.refused_passes import RefusedPass, shown_passes
from ..core.model import KernelResult, ReproResult
from ..core.outcomes import BisectionRecord, ValidationRecord
from ..core.verdicts import Verdict
from .render_outcomes import BootedKernels, outcome_lines
from .report_input import Format

def cell(repro: ReproResult | None, catalogue: Catalogue) -> str:
    """The verdict and the evidence the case's facts say a cell shows (the page shows the same)."""
    if repro is None:
        return "–"
    shown = " ".join(f"{k}={repro.evidence[k]}" for k in catalogue.shown(repro.name) if k in repro.evidence)
    return f"**{repro.verdict}** {shown}".strip()


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
    return " → ".join(str(v) if isinstance(v, int) else "n/a" for v in repro.kernel_path.values())


FOLDED = "refused ↑"  # a cell of a pass the kernel refused whole: said in its line above the grid


def case_table(ordered: list[KernelResult], privilege: str, render: Callable[[ReproResult | None, bool], str],
               failing: list[set[tuple[str, str]]] | None = None, folded: list[set[str]] | None = None) -> list[str]:
    """One row per case, one column per kernel: render(result, whether the judgement finds it failing). A case
    `folded` for a kernel (its pass refused whole) is FOLDED there; one folded on every kernel has no row."""
    lines = ["| reproducer | " + " | ".join(r.kernel_id for r in ordered) + " |", "|---|" + "---|" * len(ordered)]
    by_kernel = [{r.name: r for r in result.reproducers if r.privilege == privilege} for result in ordered]
    differing = [{name for p, name in found if p == privilege} for found in failing or [set() for _ in ordered]]
    hidden = folded or [set() for _ in ordered]
    for name in sorted({name for cells, away in zip(by_kernel, hidden) for name in cells if name not in away}):
        row = (FOLDED if name in away else render(cells.get(name), name in wrong)
               for cells, wrong, away in zip(by_kernel, differing, hidden))
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


def peer_lines(ordered: list[KernelResult], catalogue: Catalogue) -> list[str]:
    """The upstream selftests, where they ran: each test beside the case it is compared with."""
    rows = [(k, c) for k in ordered for c in compare(k, catalogue)]
    if not rows:
        return []
    lines = ["", "## Upstream selftests as peers", "",
             "tools/testing/selftests/perf_events of Debian's linux-source, run as root after the cases "
             "(`--peer-selftests`); each test beside the case whose facts name its program.", "",
             "| kernel | upstream test | its result | sigwake case (root) | they |", "|---|---|---|---|---|"]
    for kernel, c in rows:
        result = c.peer.result + (f": {c.peer.detail}" if c.peer.detail and c.peer.result != "pass" else "")
        lines.append(f"| {kernel.kernel_id} | {c.peer.program}: {c.peer.test} | {result.replace('|', '/')} "
                     f"| {c.against} | {c.word} |")
    return lines


def findings_by_kernel(ordered: list[KernelResult], found: list[Finding], catalogue: Catalogue) -> list[str]:
    """A kernel per row, a kind of finding per column (those any kernel has), and what could not be tested or
    judged, so a reader sees which kernels are clean and what the others found or lacked."""
    counts = Counter((f.kernel_id, f.kind) for f in found)
    kinds = [k for k in FINDING_KINDS if any(kind == k for _, kind in counts)]
    kernels = [r.kernel_id for r in ordered] + sorted({f.kernel_id for f in found} - {r.kernel_id for r in ordered})
    lacking = {r.kernel_id: "not tested" if untested(r) is not None else f"{n} cases not judged"
               for r in ordered if untested(r) is not None or (n := len(unjudged(r, catalogue)))}
    lines = ["", "## Findings by kernel", "", "| kernel | " + " | ".join([*kinds, "all", "not judged"]) + " |",
             "|---|" + "---|" * (len(kinds) + 2)]
    for kernel in kernels:
        row = [str(counts[(kernel, k)] or "–") for k in kinds]
        total = str(sum(counts[(kernel, k)] for k in kinds) or "–")
        lines.append(f"| {kernel} | " + " | ".join([*row, total, lacking.get(kernel, "–")]) + " |")
    return lines


def legend() -> list[str]:
    """Every verdict word a cell can hold, and what a cell's evidence and marks say."""
    return ["", "## Legend", "", *(f"- **{v}**: {v.meaning}" for v in Verdict),
            "- ≠: the judgement finds this cell a finding (see Findings); –: the case did not run on that kernel",
            "- evidence after the word: what the case's facts say a cell shows (records written, poll readiness, "
            "signals received, si_code of the first: 1 = POLL_IN, ...)"]


def refused_line(kernel_id: str, refused: RefusedPass) -> str:
    return f"{kernel_id}: {refused.line()}"


def render_matrix(results: list[KernelResult], catalogue: Catalogue, unreadable: list[str] | None = None,
                  validations: list[ValidationRecord] | None = None,
                  bisections: list[BisectionRecord] | None = None, booted: BootedKernels | None = None) -> str:
    ordered = sorted(results, key=KernelResult.order)
    failing = [{(j.case.privilege, j.name) for cases in judged_cases(result, catalogue).values() for j in cases
                if j.finding is not None} for result in ordered]
    judged = of_run(ordered, catalogue, unread(unreadable or []))
    found = judged.findings
    privileges = list(dict.fromkeys(r.privilege for result in ordered for r in result.reproducers))
    lines = [
        "# sigwake matrix",
        "",
        "Regenerated from the result files beside it: the findings first, then each privilege pass's grid "
        "(folded: a case per row, a kernel per column), the kernels, and what is known of each case.",
        "",
        f"**{judged.last_line()}**",
    ]
    if unreadable:
        lines += ["", f"**{len(unreadable)} result files could not be read**: named below, judged by no one."]
    lines += findings_by_kernel(ordered, found, catalogue)
    if found:
        listed = shown(found, ordered)
        lines += ["", "## Findings", "", f"<details><summary>{len(listed)} lines, each finding with what it differs "
                  "from and where that is known from</summary>", "", *(f"- {line}" for line in listed), "",
                  "</details>"]
    lines += legend()
    refusals = [{p.privilege: p.refused for p in shown_passes(result, catalogue) if p.refused} for result in ordered]
    for privilege in privileges:
        refused = [refused_line(result.kernel_id, by_pass[privilege]) for result, by_pass in zip(ordered, refusals)
                   if privilege in by_pass]
        folded = [set(by_pass[privilege].names()) if privilege in by_pass else set() for by_pass in refusals]
        grid = case_table(ordered, privilege, lambda repro, differs: ("≠ " if differs else "") + cell(repro, catalogue),
                          failing, folded)
        wrong = sum(1 for cells in failing for p, _ in cells if p == privilege)
        lines += ["", f"## {privilege}"]
        if refused:  # one line per kernel that refused the pass whole; its other cases stay in the grid
            lines += ["", f"Refused whole by {len(refused)} kernels (their cells `{FOLDED}`):", "",
                      *(f"- {line}" for line in refused)]
        lines += ["", f"<details><summary>{len(grid) - 2} cases × {len(ordered)} kernels; {wrong} cells are findings "
                  "(≠)</summary>", "", *grid, "", "</details>"]

    lines += kernel_path_table(ordered)
    lines += ["", "## Kernels", "",
              "| kernel | release | flavour | from | sha256 | boot | perf_event_paranoid per pass | runner |",
              "|---|---|---|---|---|---|---|---|"]
    for result in ordered:
        sha = (result.origin.sha256 or "")[:12] or "–"
        r = result.runner
        runner = f"{r.machine}; {r.accel}: {r.accel_reason}" if r.mode == "qemu" else r.mode
        if r.cases:
            runner += f"; {r.partial()}"
        if r.skipped_passes:
            runner += "; skipped " + ", ".join(f"{p} ({why})" for p, why in r.skipped_passes.items())
        paranoid = ", ".join(f"{k}: {v}" for k, v in result.paranoid.items()) or "–"
        flavour = f"{result.origin.arch} {result.origin.flavour}" if result.origin.flavour else "–"
        lines.append(f"| {result.kernel_id} | {result.release or '?'} | {flavour} | {result.origin.describe()} | {sha} "
                     f"| {_boot(result)} | {paranoid} | {runner} |")

    if unreadable:
        lines += ["", "## Result files that could not be read", ""] + [f"- {u}" for u in unreadable]
    splats = [(result, s) for result in ordered for s in result.splats]
    if splats:
        lines += ["", "## Kernel reports (splats)", ""]
        lines += [f"- {result.kernel_id}: **{s.title}** ({s.where()}; console line {s.console_line}"
                  f"{'; tainted ' + s.tainted_before + ' -> ' + s.tainted_after if s.tainted_after else ''}"
                  f"{'; it ended the boot' if s.fatal else ''})" for result, s in splats]
    lines += peer_lines(ordered, catalogue)
    lines += outcome_lines(validations or [], bisections or [], booted)
    lines += ["", "## Expectations and their sources", ""]
    grouped: dict[tuple[str, str], list[str]] = {}
    known = [("*", e) for e in expectations.KERNEL_WIDE]
    known += [(case.name, e) for case in catalogue.cases.values() for e in case.expected]
    for name, expectation in known:
        where = f" ({scope})" if (scope := expectation.scope()) else ""
        grouped.setdefault((where, expectation.source), []).append(f"`{name}`")
    lines += [f"- {', '.join(cases)}{where}: {source}" for (where, source), cases in grouped.items()]
    return "\n".join(lines) + "\n"


FORMAT = Format("markdown", 2, lambda given: {"matrix.md": render_matrix(given.kernels, given.catalogue, given.unreadable,
                                                                        given.validations, given.bisections,
                                                                        given.booted)})
