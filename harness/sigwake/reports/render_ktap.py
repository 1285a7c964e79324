"""KTAP (Documentation/dev-tools/ktap.rst), one document per kernel: a subtest per
privilege pass, a result per case. A known failure of the kernel is `ok ... # XFAIL`
with its source, an unsupported case `ok ... # SKIP` with the reason, a difference
from what is known `not ok`, a reproducer's failure `not ok ... # ERROR`, a case the
boot never reached `not ok ... # TIMEOUT` or `# ERROR`."""

from __future__ import annotations

from ..programs.catalogue import Catalogue
from ..judge.judgement import Judged, Outcome, judged_cases
from ..core.model import KernelResult
from .report_input import Format

INDENT = "    "


def _clean(text: str) -> str:
    """One line, and no '#' that would start another directive."""
    return " ".join(text.replace("#", "no.").split())


def result_line(number: int, judged: Judged) -> str:
    outcome, why = judged.outcome, _clean(judged.why)
    if outcome is Outcome.PASS:
        return f"ok {number} {judged.name}"
    if outcome is Outcome.XFAIL:
        return f"ok {number} {judged.name} # XFAIL {why}"
    if outcome is Outcome.SKIP:
        return f"ok {number} {judged.name} # SKIP {why}"
    if outcome is Outcome.ERROR:
        return f"not ok {number} {judged.name} # ERROR {why}"
    if outcome is Outcome.MISS:
        directive = "TIMEOUT" if judged.case.verdict.value == "timeout" else "ERROR"
        return f"not ok {number} {judged.name} # {directive} {why}"
    return f"not ok {number} {judged.name}"


def _evidence(judged: Judged) -> list[str]:
    shown = [f"# verdict={judged.case.verdict}", *(f"# {k}={v}" for k, v in judged.case.evidence.items())]
    if judged.outcome is Outcome.FAIL:
        shown.append(f"# difference: {_clean(judged.why)}")
    return [_clean_diag(line) for line in shown]


def _clean_diag(line: str) -> str:
    return "# " + " ".join(line[2:].split())


def render_ktap(kernel: KernelResult, catalogue: Catalogue) -> str:
    passes = judged_cases(kernel, catalogue)
    origin = kernel.origin
    lines = ["KTAP version 1",
             f"# sigwake kernel {kernel.kernel_id}: release {kernel.release or 'unknown'}, from "
             f"{origin.package or origin.path or origin.kind} {origin.version or ''}".rstrip(),
             f"# boot: {kernel.boot.status}" + (f" ({_clean(kernel.boot.detail)})" if kernel.boot.detail else ""),
             *([f"# {kernel.runner.partial()}"] if kernel.runner.cases else []),
             f"1..{len(passes)}"]
    for number, (privilege, cases) in enumerate(passes.items(), start=1):
        lines += [INDENT + "KTAP version 1", f"{INDENT}# Subtest: {privilege}", f"{INDENT}1..{len(cases)}"]
        for case_number, judged in enumerate(cases, start=1):
            lines += [INDENT + line for line in _evidence(judged)]
            lines.append(INDENT + result_line(case_number, judged))
        failed = any(j.outcome in (Outcome.FAIL, Outcome.ERROR, Outcome.MISS) for j in cases)
        lines.append(f"{'not ok' if failed else 'ok'} {number} {privilege}")
    return "\n".join(lines) + "\n"


FORMAT = Format("ktap", 3, lambda given: {f"ktap/{k.kernel_id}.ktap": render_ktap(k, given.catalogue) for k in given.kernels})
