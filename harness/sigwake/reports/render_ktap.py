"""KTAP (Documentation/dev-tools/ktap.rst), one document per kernel: a subtest per
privilege pass, a result per case. A known failure of the kernel is `not ok ... #
XFAIL` (kunit_parser, which knows only SKIP, falls back to "not ok" as ktap.rst
says a reader should: a failure, never a pass), an unsupported case `ok ... # SKIP`,
a difference from what is known `not ok`, a reproducer's failure `not ok ... #
ERROR`, a case the boot never reached `not ok ... # TIMEOUT` or `# ERROR`. A pass
the kernel refused whole is one `ok 1 refused # SKIP` line (refused_passes.py).
Every line is at most LINE_MAX characters: a directive's words are cut short (the
whole said in a diagnostic above it) and a long diagnostic (evidence such as
record_types) is folded over `#   ` lines."""

from __future__ import annotations

from ..core.model import KernelResult
from ..judge.judgement import Judged, Outcome
from ..judge.refused_passes import ShownPass, shown_passes
from ..programs.catalogue import Catalogue
from .report_input import Format

INDENT = "    "
LINE_MAX = 200
DIRECTIVE_MAX = 100  # the words after a directive; the rest is in the diagnostic above


def _clean(text: str) -> str:
    """One line, and no '#' that would start another directive."""
    return " ".join(text.replace("#", "no.").split())


def _short(text: str) -> str:
    return text if len(text) <= DIRECTIVE_MAX else text[:DIRECTIVE_MAX - 1] + "…"


def folded(diagnostic: str, indent: str = "") -> list[str]:
    """A diagnostic line ("# key=value") over as many lines as keep each within LINE_MAX, its continuations
    indented under it ("#   ...")."""
    width = LINE_MAX - len(indent)
    text = "# " + _clean(diagnostic[2:] if diagnostic.startswith("# ") else diagnostic)
    lines = [text[:width]]
    rest = text[width:]
    while rest:
        lines.append("#   " + rest[:width - 4])
        rest = rest[width - 4:]
    return [indent + line for line in lines]


def result_line(number: int, judged: Judged) -> str:
    outcome, why = judged.outcome, _short(_clean(judged.why))
    if outcome is Outcome.PASS:
        return f"ok {number} {judged.name}"
    if outcome is Outcome.XFAIL:
        return f"not ok {number} {judged.name} # XFAIL {why}"
    if outcome is Outcome.SKIP:
        return f"ok {number} {judged.name} # SKIP {why}"
    if outcome is Outcome.ERROR:
        return f"not ok {number} {judged.name} # ERROR {why}"
    if outcome is Outcome.MISS:
        directive = "TIMEOUT" if judged.case.verdict.value == "timeout" else "ERROR"
        return f"not ok {number} {judged.name} # {directive} {why}"
    return f"not ok {number} {judged.name}"


def _diagnostics(judged: Judged) -> list[str]:
    shown = [f"# verdict={judged.case.verdict}", *(f"# {k}={v}" for k, v in judged.case.evidence.items())]
    if judged.outcome is Outcome.FAIL:
        shown.append(f"# difference: {judged.why}")
    elif judged.why and judged.outcome is not Outcome.PASS:
        shown.append(f"# why: {judged.why}")
    return shown


def _pass_lines(number: int, shown: ShownPass) -> list[str]:
    lines = [INDENT + "KTAP version 1", f"{INDENT}# Subtest: {shown.privilege}",
             f"{INDENT}1..{len(shown.cases) + (1 if shown.refused else 0)}"]
    offset = 0
    if shown.refused is not None:
        lines += [line for why, n in shown.refused.reasons() for line in folded(f"# refused ({n}): {why}", INDENT)]
        lines.append(f"{INDENT}ok 1 refused # SKIP {_short(_clean(shown.refused.short()))}")
        offset = 1
    for case_number, judged in enumerate(shown.cases, start=1 + offset):
        lines += [line for diagnostic in _diagnostics(judged) for line in folded(diagnostic, INDENT)]
        lines.append(INDENT + result_line(case_number, judged))
    outcomes = [j.outcome for j in shown.cases]
    if any(o in (Outcome.FAIL, Outcome.ERROR, Outcome.MISS) for o in outcomes):
        lines.append(f"not ok {number} {shown.privilege}")
    elif Outcome.XFAIL in outcomes:
        lines.append(f"not ok {number} {shown.privilege} # XFAIL {outcomes.count(Outcome.XFAIL)} known failures")
    else:
        lines.append(f"ok {number} {shown.privilege}")
    return lines


def render_ktap(kernel: KernelResult, catalogue: Catalogue) -> str:
    passes = shown_passes(kernel, catalogue)
    origin = kernel.origin
    lines = ["KTAP version 1",
             *folded(f"# sigwake kernel {kernel.kernel_id}: release {kernel.release or 'unknown'}, from "
                     f"{origin.package or origin.path or origin.kind} {origin.version or ''}".rstrip()),
             *folded(f"# boot: {kernel.boot.status}" + (f" ({kernel.boot.detail})" if kernel.boot.detail else "")),
             *(folded(f"# {kernel.runner.partial()}") if kernel.runner.cases else []),
             f"1..{len(passes)}"]
    for number, shown in enumerate(passes, start=1):
        lines += _pass_lines(number, shown)
    return "\n".join(lines) + "\n"


FORMAT = Format("ktap", 3, lambda given: {f"ktap/{k.kernel_id}.ktap": render_ktap(k, given.catalogue) for k in given.kernels})
