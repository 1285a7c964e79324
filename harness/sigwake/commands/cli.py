"""The command line: a thin layer over the library. The launcher (./sigwake) installs what is missing and runs
`setup` and `test`; every other command lands here, parsed by arguments.py."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..programs import binaries
from ..kernels import kconfig
from ..targets import qemu
from ..core.exit_codes import COULD_NOT_TEST, FINDING, INTERRUPTED, NO_FINDING, USAGE
from ..judge import gate
from ..reports.render_summary import kernel_summary, render_summary
from ..reports.report import ReportOptions, load_input, render_given, write_given, write_reports
from .arguments import REPO, default_cache, parser
from .bisect import BisectError, Probe, bisect_debian, bisect_tree, bisection_record
from ..kernels.build import BuildError, BuildRequest, KernelBuilder, snapshot_config
from ..programs.catalogue import Catalogue
from ..core.model import KernelResult
from ..kernels.debian import DebianError
from ..targets.options import PRIVILEGES, RunOptions
from ..kernels.kernels import KernelCache, arches_of, expand_specs, flavours_of
from ..core.atomic import DiskFullError
from ..store.store import NoResults, write_bisection, write_validation
from .orchestrator import Interrupted, RunConfig, RunSummary, run_kernels, source_commit, version
from ..targets.registry import options_for_arch
from ..targets.lava_api import LavaServer
from ..targets.lava_job import default_files, prepare_job, write_jobs
from ..targets.lava_target import LavaLab, lava_accel
from ..kernels.patches import PatchError
from ..core.progress import Progress
from .qa import QaConfig, render_qa, run_qa
from ..judge.expectations import HEADLINE
from ..judge.lava_results import lava_table
from .validate import PatchedBuildFailed, validate_patch, validation_record

__all__ = ["REPO", "default_cache", "main", "parser"]


@dataclass(frozen=True)
class Ended:
    """How a command ended: its exit code, and (for --json) the document that says why."""

    exit_code: int
    document: dict[str, object] = field(default_factory=dict)


def agree_of(args: argparse.Namespace) -> int:
    """--agree as the case loop takes it: 0 (always every run) is --repeat."""
    return args.agree or args.repeat


def lava_lab(args: argparse.Namespace) -> LavaLab | None:
    if args.target != "lava":
        return None
    if not args.lava:
        raise ValueError("--target lava needs --lava URL (the LAVA server)")
    files = default_files(args.lava_files or args.cache / "lava-files", args.lava_files_url)
    server = LavaServer(args.lava, args.token or os.environ.get("SIGWAKE_LAVA_TOKEN"))
    return LavaLab(server, files, lava_table, args.device_type, args.lava_start_timeout)


def main(argv: list[str] | None = None) -> int:
    """The command's exit code (exit_codes.py)."""
    grammar = parser()
    args = grammar.parse_args(argv)  # a usage error exits 2 here
    if args.version:
        if args.command is not None:
            grammar.error("--version is said alone: it runs no command")
        print(f"sigwake {version(REPO)}")
        return NO_FINDING
    if args.command is None:
        grammar.print_help(sys.stderr)
        return USAGE
    if args.command not in CARRIED_OUT:
        print(f"sigwake {args.command}: the launcher's own command: ./sigwake {args.command}", file=sys.stderr)
        return USAGE
    # A CI runner's timeout sends SIGTERM: end as for Ctrl-C, with what finished kept and said.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    if not getattr(args, "json", False):
        return carry_out(args).exit_code
    with contextlib.redirect_stdout(sys.stderr):  # stdout is the document's alone
        ended = carry_out(args)
    print(json.dumps({**ended.document, "command": args.command, "sigwake": version(REPO),
                      "exit_code": ended.exit_code}, indent=2))
    return ended.exit_code


def carry_out(args: argparse.Namespace) -> Ended:
    try:
        return CARRIED_OUT[args.command](args)
    except PatchedBuildFailed as e:
        return ended_by(args, FINDING, f"finding: {e}")
    except (ValueError, PatchError) as e:  # what the command line asked cannot be (a patch that does not apply)
        return ended_by(args, USAGE, str(e))
    except (BuildError, DebianError, DiskFullError, NoResults) as e:
        return ended_by(args, COULD_NOT_TEST, f"could not test: {e}")
    except BisectError as e:
        return ended_by(args, e.exit_code, str(e))
    except KeyboardInterrupt:
        return ended_by(args, INTERRUPTED, "interrupted")
    except Exception as e:  # sigwake's own failure: never a pass, and never taken for the kernel's finding
        traceback.print_exc()
        return ended_by(args, COULD_NOT_TEST, f"could not test: sigwake failed: {type(e).__name__}: {e}")


def ended_by(args: argparse.Namespace, code: int, message: str) -> Ended:
    """A command that ended early: said on stderr, and as a gate's document (--json) whose findings and
    not-tested agree with the code."""
    print(f"sigwake {args.command}: {message}", file=sys.stderr)
    judged = gate.Gate([gate.Finding("", "error", message)] if code == FINDING else [],
                       [message] if code == COULD_NOT_TEST else [])
    return Ended(code, {"error": message, **judged.document()})


def run_command(args: argparse.Namespace) -> Ended:
    lab = lava_lab(args)
    kernels = tuple(args.kernels or (("default", "host") if lab is None else ("default",)))
    arches = arches_of(args.arch)
    config = RunConfig(REPO, args.build_dir, args.cache, args.results, kernels, flavours_of(args.flavour, arches),
                       arches, tuple(args.apt_source), args.accel, args.repro_timeout_ms, args.boot_timeout, args.repeat,
                       agree_of(args), args.cpus, args.jobs, args.resume, lab, args.peer_selftests, tuple(args.cases))
    options = ReportOptions(args.kcidb_origin, args.log_base_url)
    catalogue = catalogue_of(args)
    try:
        summary = run_kernels(config, Progress(quiet=args.quiet))
    except Interrupted as stop:
        write_reports(config.results_dir, options, catalogue)  # of what was kept
        return interrupted(stop, config.results_dir, catalogue)
    written = write_reports(config.results_dir, options, catalogue)
    reports = sorted({str(p.relative_to(config.results_dir)).split("/")[0] for p in written})
    print(f"recorded in {config.results_dir}/: <kernel-id>.json with console logs; reports: {', '.join(reports)}")
    for warning in summary.warnings:
        print(warning, file=sys.stderr)
    return summary_exit(summary, catalogue)


def catalogue_of(args: argparse.Namespace) -> Catalogue:
    """The cases' facts, from this machine's build of the programs (built first if need be)."""
    return binaries.build(REPO, args.build_dir, Progress(quiet=True)).catalogue


def summary_exit(summary: RunSummary, catalogue: Catalogue, also: gate.Gate | None = None) -> Ended:
    """Prints the run's summary (the last line counts its findings) and gives its exit code and document;
    `also`: what else the command found (qa's bisections), counted in the same last line."""
    text = render_summary(summary.results, catalogue, summary.failures)
    judged = gate.of_run(summary.results, catalogue, summary.failures) + (also or gate.Gate())
    if also is not None and (also.findings or also.untested):
        body = text.splitlines()[:-1]
        text = "\n".join([*body, *(f"finding: {f}" for f in also.findings),
                          *(f"not tested: {u}" for u in also.untested), judged.last_line()]) + "\n"
    print(text, end="")
    return Ended(judged.exit_code, {**judged.document(), "kernels": kernel_documents(summary.results, catalogue)})


def interrupted(stop: Interrupted, results_dir: Path, catalogue: Catalogue) -> Ended:
    """Says what an interrupted run kept and what it did not, with the summary and findings of the kernels that
    finished (every unfinished one not tested); the exit code of Ctrl-C."""
    done = [r.kernel_id for r in stop.summary.results]
    unfinished = [f"{kernel}: interrupted" for kernel in stop.summary.unfinished]
    print(render_summary(stop.summary.results, catalogue, [*stop.summary.failures, *unfinished]), end="")
    print(f"interrupted: finished and kept in {results_dir}/: {', '.join(done) or 'none'}; "
          f"not finished: {', '.join(stop.summary.unfinished) or 'none'} (run again with --resume)", file=sys.stderr)
    judged = gate.of_run(stop.summary.results, catalogue, [*stop.summary.failures, *unfinished])
    return Ended(INTERRUPTED, {"error": "interrupted", **judged.document(),
                               "kernels": kernel_documents(stop.summary.results, catalogue),
                               "unfinished": list(stop.summary.unfinished)})


def kernel_documents(kernels: list[KernelResult], catalogue: Catalogue) -> list[dict[str, object]]:
    """--json's kernels: each kernel's summary line as data, in version order."""
    return [dataclasses.asdict(kernel_summary(k, catalogue)) for k in sorted(kernels, key=KernelResult.order)]


def lava_jobs_command(args: argparse.Namespace) -> Ended:
    progress = Progress()
    files = default_files(args.directory / "files", args.lava_files_url)
    cache = KernelCache(args.cache)
    kernels = [k for spec in expand_specs(tuple(args.kernels or ["default"]), ("generic",))
               for k in cache.resolve(spec, progress) if k.image]
    config = dataclasses.replace(run_options(args), accel=lava_accel(args.accel))
    jobs = []
    for arch in dict.fromkeys(k.arch for k in kernels):  # each architecture's own programs in its jobs
        built = binaries.build_for(arch, REPO, args.build_dir, args.cache, progress)
        initrd = built.initramfs(binaries.initramfs_path(arch, args.build_dir))
        jobs += [prepare_job(k, initrd, lava_table(built.catalogue, config.privileges, k.origin.kind, config.cpus),
                             len(built.reproducers), config, files, args.device_type)
                 for k in kernels if k.arch == arch]
    for path in write_jobs(jobs, args.directory):
        print(path)
    return Ended(NO_FINDING)


def qa_command(args: argparse.Namespace) -> Ended:
    arches = arches_of(args.arch)
    run = RunConfig(REPO, args.build_dir, args.cache, args.results, (), apt_sources=tuple(args.apt_source),
                    accel=args.accel, repeat=args.repeat, agree=agree_of(args), cpus=args.cpus, jobs=args.jobs)
    config = QaConfig(run, arches, flavours_of(args.flavour, arches), tuple(args.suites) if args.suites else None,
                      not args.no_bisect, args.split)
    progress = Progress(quiet=args.quiet)

    def probe_for(arch: str) -> Probe:
        built = binaries.build_for(arch, REPO, args.build_dir, args.cache, progress).select([HEADLINE])
        work = own_directory(args.cache / "bisect" / arch)
        # A bisection is a gate: every package it judges runs the case --repeat times.
        host = RunOptions(qemu.choose_accel(args.accel), repeat=args.repeat, agree=args.repeat, privileges=("root",))
        return Probe(built, HEADLINE, HEADLINE, options_for_arch(host, arch, args.accel), work)

    options = ReportOptions(args.kcidb_origin, args.log_base_url)
    catalogue = catalogue_of(args)
    try:
        lines, summary, bisections = run_qa(config, probe_for, progress)
    except Interrupted as stop:
        write_reports(args.results, options, catalogue)  # of what was kept
        return interrupted(stop, args.results, catalogue)
    write_reports(args.results, options, catalogue)
    print(render_qa(lines), end="")
    return summary_exit(summary, catalogue, bisections)


def report_command(args: argparse.Namespace) -> Ended:
    given = load_input(args.results, ReportOptions(args.kcidb_origin, args.log_base_url), catalogue_of(args))
    if args.format:
        print(render_given(given, args.format), end="")
    else:
        for path in write_given(given):
            print(path)
    for why in given.unreadable:  # a kernel may be missing from every report: said on stderr, and exit 3
        print(f"sigwake: could not be read: {why}", file=sys.stderr)
    return Ended(COULD_NOT_TEST if given.unreadable else NO_FINDING, {"unreadable": given.unreadable})


def fragments_of(args: argparse.Namespace) -> tuple[Path, ...]:
    return tuple(args.fragment) or tuple(kconfig.default_fragments(REPO / "kernel-configs"))


def builder_of(args: argparse.Namespace) -> KernelBuilder:
    if args.config is not None and not args.config.is_file():
        raise ValueError(f"--config {args.config}: no such file")
    return KernelBuilder(args.cache, args.jobs, args.ccache,
                         snapshot_config(args.config, args.cache) if args.config is not None else None)


def build_command(args: argparse.Namespace) -> Ended:
    progress = Progress()
    built_programs = binaries.build(REPO, args.build_dir, progress)
    if args.tree is None:
        print("\n".join(f"{name}: {path}" for name, path in sorted(built_programs.reproducers.items())))
        return Ended(NO_FINDING)
    kernel = builder_of(args).build(BuildRequest(args.tree, fragments_of(args), tuple(args.patch)), progress)
    print(f"{kernel.image}\n  tree {kernel.tree_state}, key {kernel.key}, {kernel.seconds} s"
          f"{' (cached)' if kernel.cached else ''}, log {kernel.log}")
    for warning in kernel.warnings:
        print(f"  warning: {warning}")
    return Ended(NO_FINDING)


def run_options(args: argparse.Namespace) -> RunOptions:
    accel = qemu.choose_accel(args.accel)
    passes = tuple(p for p in args.passes.split(",") if p)
    unknown = sorted(set(passes) - set(PRIVILEGES))
    if unknown:
        raise ValueError(f"--passes: unknown pass {', '.join(unknown)}; there are {', '.join(PRIVILEGES)}")
    return RunOptions(accel, repeat=args.repeat, agree=agree_of(args), cpus=args.cpus, privileges=passes)


def validate_command(args: argparse.Namespace) -> Ended:
    progress = Progress()
    config = run_options(args)
    built_programs = binaries.build(REPO, args.build_dir, progress).select(args.repro)
    if not args.repro:  # a program named on purpose runs whatever it needs; the default set, what the boot can
        built_programs, left_out = built_programs.within_cpus(config.cpus)
        for program, needs in left_out.items():
            print(f"not run: {program} (its cases need {needs} CPUs: --cpus {needs}, and an SMP kernel: "
                  f"kernel-configs/smp.config among the --fragment list)")
    work = own_directory(args.cache / "validate")
    result = validate_patch(builder_of(args), args.tree, fragments_of(args), tuple(args.patch), built_programs,
                            config, work, progress, args.jobs)
    print(f"base    {result.base.tree_state} -> {result.base.image}")
    print(f"patched {result.patched.tree_state} + {', '.join(p.name for p in args.patch)} -> {result.patched.image}")
    for change in result.changes:
        print(f"  {change}")
    for report in result.reports:
        print(f"  new kernel report on the patched kernel: {report}")
    for problem in result.problems:
        print(f"  {problem.kind}: {problem.text}")
    judged = result.gate
    record = validation_record(result, str(args.tree), [p.name for p in args.patch], list(config.privileges),
                               config.repeat, source_commit(REPO), judged.last_line(), judged.exit_code)
    print(f"consoles and initramfs in {work}")
    recorded = write_validation(args.results, record)
    print(f"recorded in {recorded}")
    print(judged.last_line())
    return Ended(judged.exit_code, {**judged.document(), "base": str(result.base.image),
                                    "patched": str(result.patched.image), "changes": [str(c) for c in result.changes],
                                    "record": str(recorded)})


def own_directory(parent: Path) -> Path:
    """A directory of this command's own under `parent`, so two runs sharing a cache keep their evidence apart."""
    parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=time.strftime("%Y%m%dT%H%M%S-"), dir=parent))


def probe_of(args: argparse.Namespace, progress: Progress) -> Probe:
    program, _, case = args.repro.partition(":")
    built_programs = binaries.build(REPO, args.build_dir, progress).select([program])
    return Probe(built_programs, program, case or program, run_options(args), own_directory(args.cache / "bisect"))


def bisect_command(args: argparse.Namespace) -> Ended:
    progress = Progress()
    probe = probe_of(args, progress)
    if args.debian:
        report = bisect_debian(KernelCache(args.cache), args.debian, probe, progress, args.jobs, split=args.split)
        over = f"Debian's {args.debian} packages"
    elif args.tree is None or args.old is None or args.new is None:
        return ended_by(args, USAGE, "--tree, --old and --new (or --debian FLAVOUR)")
    else:
        report = bisect_tree(builder_of(args), args.tree, fragments_of(args), args.old, args.new, probe, progress,
                             args.split)
        over = f"{args.tree} {args.old}..{args.new}"
    for step in report.steps:
        print(f"  {step.candidate}: {step.note} -> {step.mark.value}" + (f" ({step.problem})" if step.problem else ""))
    subject = f"{probe.program}:{probe.case}"
    judged = gate.of_steps(subject, report.first_changed, report.steps)
    record = bisection_record(report, subject, over, source_commit(REPO), judged.exit_code)
    print(f"consoles and initramfs in {probe.work}")
    recorded = write_bisection(args.results, record, report.kept())
    print(f"recorded in {recorded}")
    print(report.summary(probe.case))
    for finding in judged.findings:
        print(f"finding: {finding}")
    print(judged.last_line())
    return Ended(judged.exit_code, {**judged.document(), "first_changed": report.first_changed,
                                    "steps": [dataclasses.asdict(step) for step in report.steps], "record": str(recorded)})


CARRIED_OUT: dict[str, Callable[[argparse.Namespace], Ended]] = {
    "run": run_command, "validate-patch": validate_command, "bisect": bisect_command, "qa": qa_command,
    "report": report_command, "build": build_command, "lava-jobs": lava_jobs_command}


if __name__ == "__main__":
    sys.exit(main())
