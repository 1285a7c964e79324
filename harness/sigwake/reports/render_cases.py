"""The case catalogue as a document (docs/cases.md): every case with what is known of kernels for it, its
source and fix, what it needs and what it is compared with, written from the cases' own facts and never by hand.
Regenerate: PYTHONPATH=harness /usr/bin/python3 -m sigwake.reports.render_cases > docs/cases.md"""

from __future__ import annotations

import sys
from pathlib import Path

from ..core.progress import Progress
from ..programs import binaries
from ..programs.catalogue import Catalogue, CaseFacts, Expectation

HEADER = """# The cases

Generated from the cases' facts (`SIGWAKE_CASE(name, {facts})` beside each case's code in `repro/`, read with
`PROGRAM --list --json`); do not edit: `PYTHONPATH=harness /usr/bin/python3 -m sigwake.reports.render_cases >
docs/cases.md` writes it again, and a test fails while it differs. What each program asks, in words:
[reproducers.md](reproducers.md).
"""


def known(row: Expectation) -> str:
    """One row of what is known, e.g. "not-delivered before v6.10, delivered from it (fd20bb51ed39)"."""
    if row.since is None and not row.stable:
        said = f"{row.after}" if row.before == row.after else f"{row.before}, {row.after} once fixed"
    else:
        since = f"v{row.since[0]}.{row.since[1]}" if row.since else "the stable releases named"
        said = f"{row.before} before {since}, {row.after} from {'them' if row.since is None else 'it'}"
    stable = ", ".join(".".join(map(str, r)) for r in row.stable)
    return (said + (f" ({row.commit})" if row.commit else "") + (f"; stable {stable}" if stable else "")
            + (f" [{row.scope()}]" if row.scope() else ""))


def case_entry(case: CaseFacts) -> list[str]:
    lines = [f"- **{case.name}**"]
    for row in case.expected:
        lines.append(f"  - {known(row)}: {row.source}")
    needs = list(case.kconfig) + ([f"{case.cpus} CPUs"] if case.cpus > 1 else [])
    lines.append(f"  - needs {', '.join(needs) or 'nothing'}; compared on the verdict"
                 + (f" and {', '.join(case.defining)}" if case.defining else "")
                 + (f"; upstream selftests beside it: {', '.join(case.peers)}" if case.peers else ""))
    return lines


def render_cases(catalogue: Catalogue) -> str:
    programs = list(dict.fromkeys(c.program for c in catalogue.cases.values()))
    lines = [HEADER, f"{len(catalogue.cases)} cases in {len(programs)} programs.", ""]
    for program in programs:
        lines += [f"## {program}", ""]
        for case in (c for c in catalogue.cases.values() if c.program == program):
            lines += case_entry(case)
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    source = Path(__file__).resolve().parents[3]
    built = binaries.build(source, source / "build", Progress(quiet=True))
    sys.stdout.write(render_cases(built.catalogue))


if __name__ == "__main__":
    main()
