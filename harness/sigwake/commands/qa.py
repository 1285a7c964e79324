"""sigwake qa: a distro kernel QA person's question in one command. For each
architecture and flavour, the newest package of each suite is run (the whole
suite, recorded in results/ as `run` records it); wherever the headline case's
verdict changes between two suites, the packages between them are bisected to
the first that changed. The answer is one line per architecture and flavour,
kept in results/qa.json (store.py) for the reports; each bisection is kept as
bisect's are (results/bisections/), and its findings (an answer that is not one
package, a package that crashed, hung, split or splatted, a bisection that could
not run) count in qa's exit code and last line beside the run's."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cmp_to_key

import apt_pkg

from .bisect import BisectError, Probe, bisect_debian, bisection_record
from ..kernels.build import BuildError
from ..kernels.debian import DebianError, Package
from ..core.debian_names import ending
from ..kernels.kernels import DebianQuery, KernelCache, expand_specs
from ..core.model import KernelResult, QaBoundary, QaLine, QaStep
from .orchestrator import RunConfig, RunSummary, run_kernels, source_commit
from ..core.progress import Progress
from ..judge.expectations import HEADLINE
from ..judge.change import verdict_changes
from ..judge.gate import Gate, of_steps
from ..judge.judgement import Finding
from ..store.store import write_bisection, write_qa

@dataclass(frozen=True)
class QaConfig:
    run: RunConfig  # where, how and how many at once; its kernel specs are replaced by the QA set
    arches: tuple[str, ...] = ("amd64",)
    flavours: tuple[str, ...] = ("generic",)  # or ("all",): each architecture's own
    suites: tuple[str, ...] | None = None  # of the default series; None: every one
    bisect: bool = True
    split: str = "old"  # how a bisection marks a package whose runs split (bisect.SPLIT)


def qa_queries(config: QaConfig) -> list[DebianQuery]:
    return [q for q in expand_specs(("default",), config.flavours, config.arches)
            if isinstance(q, DebianQuery) and (config.suites is None or q.suite in config.suites)]


def headline(result: KernelResult) -> str:
    root = next((c for c in result.reproducers if c.name == HEADLINE and c.privilege == "root"), None)
    return str(root.verdict) if root is not None else "not run"


def lines_of(queries: list[DebianQuery], summary: RunSummary) -> list[QaLine]:
    """The run's results grouped by architecture and flavour, in Debian version order."""
    apt_pkg.init_system()
    lines = {(q.arch, q.flavour): QaLine(q.arch, q.flavour) for q in queries}
    for result in summary.results:
        line = lines.get((result.origin.arch or "", result.origin.flavour or ""))
        if line is not None and result.origin.package and result.origin.version:
            line.steps.append(QaStep(result.origin.package, result.origin.version, result.origin.suite or "",
                                     headline(result)))
    for failure in summary.failures:  # "bookworm arm64 16k: bookworm has no package linux-image-6.1.0-*-arm64-16k"
        for query in queries:
            if failure.startswith(f"{query.describe()}: "):
                lines[(query.arch, query.flavour)].missing.append(failure)
    for line in lines.values():
        line.steps.sort(key=cmp_to_key(lambda a, b: int(apt_pkg.version_compare(a.version, b.version))))
    return list(lines.values())


def find_boundary(config: QaConfig, line: QaLine, old: QaStep, new: QaStep, probe: Probe, progress: Progress
                  ) -> tuple[QaBoundary, Gate]:
    """The boundary, and what the bisection found (gate.of_steps) or could not do; the bisection is stored."""
    ends = (Package(old.suite, old.package, old.version), Package(new.suite, new.package, new.version))
    fallback = QaBoundary(old.verdict, new.verdict, f"{old.package} {old.version}", f"{new.package} {new.version}", "")
    where = f"{line.arch} {line.flavour}"
    flavour = ending(line.arch, line.flavour).lstrip("-")
    try:
        report = bisect_debian(KernelCache(config.run.cache, config.run.apt_sources), flavour, probe, progress,
                               config.run.jobs, ends, config.split)
    except BisectError as e:
        why = f"{fallback.last_old} .. {fallback.first_new} not bisected: {e}"
        gate = Gate(untested=[f"{where}: {why}"]) if e.exit_code == 3 else Gate([Finding(where, "uncertain", why)])
        return replace(fallback, how=f"not bisected: {e}"), gate
    except (DebianError, OSError) as e:
        return replace(fallback, how=f"not bisected: {e}"), Gate(untested=[f"{where}: not bisected: {e}"])
    subject = f"{HEADLINE}:{HEADLINE}"
    gate = of_steps(f"{where} {HEADLINE}", report.first_changed, report.steps)
    write_bisection(config.run.results_dir, bisection_record(report, subject, f"Debian's {flavour} packages",
                                                             source_commit(config.run.source), gate.exit_code),
                    report.kept())
    if len(report.first_changed) != 1:
        return replace(fallback, how=f"bisected to one of {', '.join(report.first_changed)}"), gate
    return QaBoundary(str(report.old), str(report.new), report.last_old, report.first_changed[0],
                      report.summary(HEADLINE).replace("\n", "; ")), gate


def run_qa(config: QaConfig, probe_for: Callable[[str], Probe] | None, progress: Progress
           ) -> tuple[list[QaLine], RunSummary, Gate]:
    """`probe_for(arch)`: how a package of that architecture is judged in a bisection (None: no bisection).
    With the lines and the run's summary, what the bisections found."""
    queries = qa_queries(config)
    summary = run_kernels(replace(config.run, kernel_specs=tuple(queries)), progress)
    lines = lines_of(queries, summary)
    bisections = Gate()
    for line in lines:
        for old, new in verdict_changes(line):
            if config.bisect and probe_for is not None:
                progress.step(f"qa: {line.arch} {line.flavour}: {old.verdict} on {old.package} {old.version}, "
                              f"{new.verdict} on {new.package} {new.version}; bisecting the packages between")
                try:
                    probe = probe_for(line.arch)
                except (BuildError, DebianError, OSError) as e:  # the programs for it did not build: said, not lost
                    why = f"{old.package} {old.version} .. {new.package} {new.version} not bisected: {e}"
                    line.boundaries.append(QaBoundary(old.verdict, new.verdict, f"{old.package} {old.version}",
                                                      f"{new.package} {new.version}", f"not bisected: {e}"))
                    bisections += Gate(untested=[f"{line.arch} {line.flavour}: {why}"])
                    continue
                boundary, found = find_boundary(config, line, old, new, probe, progress)
                line.boundaries.append(boundary)
                bisections += found
            else:
                line.boundaries.append(QaBoundary(old.verdict, new.verdict, f"{old.package} {old.version}",
                                                  f"{new.package} {new.version}", "not bisected (--no-bisect)"))
    write_qa(config.run.results_dir, lines)
    return lines, summary, bisections


def render_qa(lines: list[QaLine]) -> str:
    table = [f"{line.sentence()}" for line in lines]
    for line in lines:
        table += [f"  {b.last_old} -> {b.first_new}: {b.how}" for b in line.boundaries if b.how]
        table += [f"  not tested: {m}" for m in line.missing]
    return "\n".join(table) + "\n"
