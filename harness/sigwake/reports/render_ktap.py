"""KTAP (Documentation/dev-tools/ktap.rst), one document per kernel: first the
kernel's own subtest (its boot, and a `not ok` per finding beside its cases), then a
subtest per privilege pass, a result per case. A known failure of the kernel is `not ok ... #
XFAIL` (kunit_parser, which knows only SKIP, falls back to "not ok" as ktap.rst
says a reader should: a failure, never a pass), an unsupported case `ok ... # SKIP`,
a difference from what is known `not ok`, a reproducer's failure `not ok ... #
ERROR`, a case the boot never reached `not ok ... # TIMEOUT` or `# ERROR`. A pass
the kernel refused whole is one `ok 1 refused-whole # SKIP` line (refused_passes.py),
a pass where nothing ran is `ok N <pass> # SKIP`, and a pass whose only failures are
known is `ok`, as the gate reads it (its known failures each `not ok` inside; a
parser that counts nested results still counts them). kselftest itself writes `ok #
XFAIL`, which kunit_parser reads as a pass. Every line is at most LINE_MAX
characters: a directive's words are cut short (the whole said in a diagnostic
above it) and a long diagnostic (evidence such as record_types) is said as a
header, "# key (N characters, over K lines):", and its text over `#   ` lines."""

from __future__ import annotations

import textwrap

from ..core.model import KernelResult
from ..judge.judgement import (BOOT_ENDINGS, Finding, Judged, Outcome, beside_cases, flavour_differences, untested,
                               whole_run)
from ..judge.refused_passes import ShownPass, shown_passes
from ..programs.catalogue import Catalogue
from .report_input import Format, ReportInput

INDENT = "    "
LINE_MAX = 200
DIRECTIVE_MAX = 100  # the words after a directive; the rest is in the diagnostic above
REFUSED = "refused-whole"  # the result line of a pass refused whole: no case's name (they have no '-')
KERNEL = "kernel"  # the kernel's own subtest, before the passes: its boot and its findings beside the cases


def _clean(text: str) -> str:
    """One line, and no '#' that would start another directive (a result line's words)."""
    return " ".join(text.replace("#", "no.").split())


def _one_line(text: str) -> str:
    """A diagnostic's text on one line, as said otherwise."""
    return " ".join(text.split())


def _short(text: str) -> str:
    return text if len(text) <= DIRECTIVE_MAX else text[:DIRECTIVE_MAX - 1] + "…"


def folded(diagnostic: str, indent: str = "") -> list[str]:
    """A diagnostic line within LINE_MAX as it is; a longer one ("# key=value") said as a header and its text
    over `#   ` lines ("# key (N characters, over K lines):"), so no line reads as the whole of a value."""
    text = _one_line(diagnostic[2:] if diagnostic.startswith("# ") else diagnostic)
    width = LINE_MAX - len(indent) - 4
    if len(text) + 2 <= LINE_MAX - len(indent):
        return [f"{indent}# {text}"]
    key, sep, value = text.partition("=")
    if not sep or " " in key:  # prose, not a key=value: said after a colon, if at all
        key, sep, value = text.partition(": ")
    head, body = (key, value) if sep else ("", text)
    # prose at its spaces (joined again with one); a value with none (record_types) cut as it comes (joined again
    # with none)
    spaced = " " in body
    chunks = textwrap.wrap(body, width) if spaced else [body[i:i + width] for i in range(0, len(body), width)]
    named = f"{head} " if head else ""
    joined = "joined with spaces" if spaced else "joined as they are"
    return [f"{indent}# {named}({len(body)} characters, over {len(chunks)} lines, {joined}):",
            *(f"{indent}#   {chunk}" for chunk in chunks)]


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
        lines += folded(f"# refused whole: {shown.refused.why}", INDENT)
        lines += folded(f"# refused cases: {', '.join(shown.refused.names())}", INDENT)
        lines.append(f"{INDENT}ok 1 {REFUSED} # SKIP {_short(_clean(shown.refused.short()))}")
        offset = 1
    for case_number, judged in enumerate(shown.cases, start=1 + offset):
        lines += [line for diagnostic in _diagnostics(judged) for line in folded(diagnostic, INDENT)]
        lines.append(INDENT + result_line(case_number, judged))
    outcomes = [j.outcome for j in shown.cases]
    if any(o in (Outcome.FAIL, Outcome.ERROR, Outcome.MISS) for o in outcomes):
        lines.append(f"not ok {number} {shown.privilege}")
    elif Outcome.XFAIL in outcomes:  # each is not ok above; the pass, as the gate, has no finding
        known = outcomes.count(Outcome.XFAIL)
        lines += [f"# {shown.privilege}: {known} known failure{'s' if known > 1 else ''}, no finding",
                  f"ok {number} {shown.privilege}"]
    elif all(o is Outcome.SKIP for o in outcomes):  # nothing ran: the whole pass was skipped
        lines.append(f"ok {number} {shown.privilege} # SKIP nothing ran" +
                     (f": {_short(_clean(shown.refused.short()))}" if shown.refused else ""))
    else:
        lines.append(f"ok {number} {shown.privilege}")
    return lines


def _kernel_lines(kernel: KernelResult, found: list[Finding]) -> list[str]:
    """The kernel's own subtest, first: its boot (the host's running kernel, which nothing booted: its run; a
    crash or hang that ended it fails it) and a `not ok` per finding beside its cases (a report no case holds, a selftest that
    disagrees, a flavour that differs), so the parser counts every finding the summary counts."""
    ended = [f for f in found if f.kind in BOOT_ENDINGS]
    others = [f for f in found if f.kind not in BOOT_ENDINGS]
    lines = [INDENT + "KTAP version 1", f"{INDENT}# Subtest: {KERNEL}", f"{INDENT}1..{1 + len(others)}"]
    why, name = untested(kernel), whole_run(kernel)
    lines += [line for f in ended for line in folded(f"# {f.kind}: {f.text}", INDENT)]
    if why is not None:
        lines += [*folded(f"# not tested: {why}", INDENT), f"{INDENT}not ok 1 {name} # ERROR {_short(_clean(why))}"]
    else:
        lines.append(f"{INDENT}{'not ok' if ended else 'ok'} 1 {name}")
    for number, finding in enumerate(others, start=2):
        lines += folded(f"# {finding.kind}: {finding.text}", INDENT)
        lines.append(f"{INDENT}not ok {number} {finding.kind}-{number - 1}")
    failed = bool(others or ended or why is not None)
    return lines + [f"{'not ok' if failed else 'ok'} 1 {KERNEL}"]


def render_ktap(kernel: KernelResult, catalogue: Catalogue, flavours: list[Finding] | None = None) -> str:
    """`flavours`: flavour_differences of every kernel rendered beside this one (one kernel alone has none)."""
    found = beside_cases(kernel, catalogue, flavours or [])
    passes = shown_passes(kernel, catalogue)
    origin = kernel.origin
    lines = ["KTAP version 1",
             *folded(f"# sigwake kernel {kernel.kernel_id}: release {kernel.release or 'unknown'}, from "
                     f"{origin.package or origin.path or origin.kind} {origin.version or ''}".rstrip()),
             *folded(f"# boot: {kernel.boot.status}" + (f" ({kernel.boot.detail})" if kernel.boot.detail else "")),
             *(folded(f"# {kernel.runner.partial()}") if kernel.runner.cases else []),
             f"1..{1 + len(passes)}", *_kernel_lines(kernel, found)]
    for number, shown in enumerate(passes, start=2):
        lines += _pass_lines(number, shown)
    return "\n".join(lines) + "\n"


def _documents(given: ReportInput) -> dict[str, str]:
    flavours = flavour_differences(given.kernels)
    return {f"ktap/{k.kernel_id}.ktap": render_ktap(k, given.catalogue, flavours) for k in given.kernels}


FORMAT = Format("ktap", 3, _documents)
