"""The command line: a thin layer over the library. The launcher (./sigwake)
installs what is missing and runs `test`; everything else lands here."""

from __future__ import annotations

import argparse
import dataclasses
import os
import signal
import sys
import tempfile
import time
from pathlib import Path


from ..programs import binaries
from ..kernels import kconfig
from ..core import protocol
from ..targets import qemu
from ..core.exit_codes import COULD_NOT_TEST, FINDING, INTERRUPTED, NO_FINDING, USAGE
from ..judge import gate
from ..reports.render_summary import render_summary
from ..reports.report import FORMATS, ReportOptions, render, write_reports
from .bisect import SPLIT, BisectError, Probe, bisect_debian, bisect_tree, bisection_record
from ..kernels.build import BuildError, BuildRequest, KernelBuilder
from ..programs.catalogue import Catalogue
from ..kernels.debian import DebianError
from ..targets.options import PRIVILEGES, RunOptions
from ..core.debian_names import FLAVOURS
from ..kernels.kernels import KernelCache, arches_of, expand_specs, flavours_of
from ..core.atomic import DiskFullError
from ..store.store import NoResults, write_bisection, write_validation
from .orchestrator import Interrupted, RunConfig, RunSummary, run_kernels, source_commit
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

REPO = Path(__file__).resolve().parents[3]


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(os.environ.get("SIGWAKE_CACHE", Path(base) / "sigwake"))


# The options several commands share, each defined once.

def cache_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cache", type=Path, default=default_cache())


def results_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--results", type=Path, default=REPO / "results")


def jobs_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help=what)


def quiet_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quiet", action="store_true", help="no progress lines")


def boot_options(p: argparse.ArgumentParser, repeat_per: str = "kernel", agree: int = protocol.DEFAULT_AGREE) -> None:
    """`agree`: 0 in the gates (validate-patch, bisect): every case runs --repeat times, so a case wrong in one
    run of five is seen as often as five runs can see it (README "Repeats")."""
    p.add_argument("--accel", choices=("auto", "kvm", "tcg"), default="auto")
    p.add_argument("--repeat", type=int, default=protocol.DEFAULT_REPEAT,
                   help=f"runs of each case per {repeat_per}, at most (default: %(default)s)")
    p.add_argument("--agree", type=int, default=agree,
                   help="a case whose first N runs agree stops there; runs that split go on to --repeat "
                        "(0: always --repeat runs; default: %(default)s)")


def cpus_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cpus", type=int, default=1,
                   help="guest vCPUs (default: %(default)s; inherit_time_other_cpu needs 2; more than one under TCG: "
                        "see README)")


def agree_of(args: argparse.Namespace) -> int:
    """--agree as the case loop takes it: 0 (always every run) is --repeat."""
    return args.agree or args.repeat


def kernel_source_options(p: argparse.ArgumentParser, tree_required: bool = False) -> None:
    p.add_argument("--tree", type=Path, required=tree_required, help="a git kernel tree")
    p.add_argument("--fragment", action="append", type=Path, default=[],
                   help="config fragment(s) (default: kernel-configs/ " + ", ".join(kconfig.DEFAULT_FRAGMENTS) + ")")
    cache_option(p)
    p.add_argument("--ccache", type=Path, default=None, help="ccache directory (default: <cache>/ccache)")
    jobs_option(p, "make jobs; also, when > 1, validate-patch boots base and patched at once and "
                   "bisect --debian judges that many packages per round (default: the cores)")


def case_loop_options(p: argparse.ArgumentParser, passes: tuple[str, ...], agree: int = protocol.DEFAULT_AGREE) -> None:
    boot_options(p, agree=agree)
    cpus_option(p)
    p.add_argument("--passes", default=",".join(passes),
                   help=f"privilege passes, comma-separated, of {', '.join(PRIVILEGES)} (default: %(default)s)")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sigwake", description=__doc__)
    p.add_argument("--build-dir", type=Path, default=REPO / "build")
    sub = p.add_subparsers(dest="command", required=True)

    build = sub.add_parser("build", help="build the reproducers (Meson); with --tree, a kernel from source")
    kernel_source_options(build)
    build.add_argument("--patch", action="append", type=Path, default=[], help="git format-patch or mbox; repeatable")

    validate = sub.add_parser("validate-patch", help="build and boot a tree without and with patches; compare")
    kernel_source_options(validate, tree_required=True)
    case_loop_options(validate, PRIVILEGES, agree=0)
    validate.add_argument("--patch", action="append", type=Path, required=True, help="format-patch or mbox; repeatable")
    validate.add_argument("--repro", action="append", default=[], help="reproducer program(s) to run (default: all)")
    results_option(validate)

    bisect = sub.add_parser("bisect", help="the first commit, or Debian package, whose behaviour changed")
    kernel_source_options(bisect)
    case_loop_options(bisect, ("root",), agree=0)
    bisect.add_argument("--old", help="a commit with the old behaviour (before the fix or the regression)")
    bisect.add_argument("--new", help="a commit with the new behaviour")
    bisect.add_argument("--debian", metavar="FLAVOUR", help="bisect Debian's packages of a flavour, e.g. amd64")
    bisect.add_argument("--repro", required=True, help="PROGRAM or PROGRAM:CASE, e.g. watermark_sigio")
    split_option(bisect)
    results_option(bisect)

    run = sub.add_parser("run", help="test kernels and record the matrix under results/")
    run.add_argument("--kernel", action="append", dest="kernels", metavar="SPEC",
                     help="default (the Debian set), host, a path to a bzImage/vmlinuz/vmlinux, or a Debian "
                          "package name (optionally suite:name); repeatable. Default: default and host")
    boot_options(run, "privilege pass")
    results_option(run)
    cache_option(run)
    run.add_argument("--repro-timeout-ms", type=int, default=protocol.DEFAULT_TIMEOUT_MS, help="per reproducer run")
    run.add_argument("--boot-timeout", type=float, default=0.0, help="seconds per boot (default: 60 + reproducers x their timeout)")
    cpus_option(run)
    quiet_option(run)
    jobs_option(run, "kernels run at once, each its own QEMU, or LAVA jobs in flight (default: the cores, "
                     "%(default)s)")
    run.add_argument("--resume", action="store_true",
                     help="keep kernels already recorded for the same image and the same programs")
    run.add_argument("--peer-selftests", action="store_true",
                     help="also run the upstream perf selftests (watermark_signal, sigtrap_threads, remove_on_exec "
                          "from Debian's linux-source) as root after the cases, and compare them with the cases")
    run.add_argument("--flavour", default="generic",
                     help="flavours of the default set, comma-separated: " + ", ".join(FLAVOURS["arm64"]) +
                          " (16k: arm64 only), or all (default: %(default)s)")
    run.add_argument("--arch", default="amd64", help="architectures of the default set: amd64, arm64 "
                                                     "(default: %(default)s)")
    apt_source_option(run)
    run.add_argument("--target", choices=("qemu", "lava"), default="qemu",
                     help="where the images boot: QEMU here, or as jobs of a LAVA lab (--lava); "
                          "the host kernel always runs natively")
    lava_options(run)
    report_options(run)

    jobs = sub.add_parser("lava-jobs", help="write a LAVA job definition per kernel (and its files); submit nothing")
    jobs.add_argument("directory", type=Path, help="where <kernel-id>.yaml and jobs.json (each job's token) go")
    jobs.add_argument("--kernel", action="append", dest="kernels", metavar="SPEC",
                      help="as for run (default: the Debian set)")
    cache_option(jobs)
    jobs.add_argument("--device-type", default="qemu", help="the lab's QEMU device type (default: %(default)s)")
    jobs.add_argument("--lava-files-url", help="the URL the workers fetch DIRECTORY/files from "
                                               "(default: its file: URL, for a worker on this machine)")
    case_loop_options(jobs, PRIVILEGES)

    qa = sub.add_parser("qa", help="every flavour, the newest package of each suite, and since which package "
                                   "the verdict changed")
    qa.add_argument("--arch", default="amd64", help="architectures, comma-separated: amd64, arm64 (default: %(default)s)")
    qa.add_argument("--flavour", default="all", help="flavours, comma-separated, or all (default: %(default)s)")
    qa.add_argument("--suite", action="append", dest="suites", metavar="SUITE",
                    help="limit to these suites of the default series; repeatable (default: every one)")
    qa.add_argument("--no-bisect", action="store_true", help="only the newest packages; name no boundary")
    split_option(qa)
    apt_source_option(qa)
    results_option(qa)
    cache_option(qa)
    boot_options(qa)
    cpus_option(qa)
    jobs_option(qa, "kernels booted at once (default: %(default)s)")
    quiet_option(qa)
    report_options(qa)

    report = sub.add_parser("report", help="the reports, from the stored results (no re-run)")
    results_option(report)
    report.add_argument("--format", choices=FORMATS,
                        help="print this one format (kcidb: what kcidb-submit takes); without it, write every file")
    report_options(report)
    return p


def split_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--split", choices=SPLIT, default="old",
                   help="a kernel whose repeated runs split: old (default) marks it old when any run shows the old "
                        "verdict (it still reproduces the old behaviour), new likewise for the new verdict, skip "
                        "never judges it; each such step says so")


def apt_source_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--apt-source", action="append", default=[], metavar="LINE",
                   help='a distro\'s own repository, as a sources.list line: "deb [signed-by=KEYRING] URL SUITE '
                        'COMPONENT"; repeatable; searched before Debian\'s suites for --kernel PACKAGE (kept in a '
                        'private apt state, never the system\'s)')


def lava_options(p: argparse.ArgumentParser) -> None:
    lava = p.add_argument_group("LAVA (--target lava)")
    lava.add_argument("--lava", metavar="URL", help="the LAVA server, e.g. https://lava.example.org")
    lava.add_argument("--token", help="an API token of a user who may submit jobs (default: $SIGWAKE_LAVA_TOKEN)")
    lava.add_argument("--device-type", default="qemu", help="the lab's QEMU device type (default: %(default)s)")
    lava.add_argument("--lava-files", type=Path, help="where jobs' kernels and initramfs files are put "
                                                      "(default: <cache>/lava-files)")
    lava.add_argument("--lava-files-url", help="the URL the workers fetch --lava-files from "
                                               "(default: its file: URL, for workers that share this filesystem)")
    lava.add_argument("--lava-start-timeout", type=float, default=1800.0,
                      help="seconds a job may wait in the queue before it is canceled and recorded (default: %(default)s)")


def lava_lab(args: argparse.Namespace) -> LavaLab | None:
    if args.target != "lava":
        return None
    if not args.lava:
        raise ValueError("--target lava needs --lava URL (the LAVA server)")
    files = default_files(args.lava_files or args.cache / "lava-files", args.lava_files_url)
    server = LavaServer(args.lava, args.token or os.environ.get("SIGWAKE_LAVA_TOKEN"))
    return LavaLab(server, files, lava_table, args.device_type, args.lava_start_timeout)


def report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kcidb-origin", default="sigwake", help="KCIDB origin of every object (default: %(default)s)")
    p.add_argument("--log-base-url", help="where the console logs are served, for KCIDB log_url (default: file: URLs)")


def main(argv: list[str] | None = None) -> int:
    """The command's exit code (exit_codes.py): 0 no finding, 1 a finding, 2 usage, 3 could not test, 130
    interrupted."""
    args = parser().parse_args(argv)  # a usage error exits 2 here
    progress = Progress()
    try:
        if args.command == "build":
            return build_command(args, progress)
        if args.command == "validate-patch":
            return validate_command(args, progress)
        if args.command == "bisect":
            return bisect_command(args, progress)
        if args.command == "report":
            return report_command(args)
        if args.command == "lava-jobs":
            return lava_jobs_command(args, progress)
        if args.command == "qa":
            return qa_command(args)
        return run_command(args)
    except PatchedBuildFailed as e:
        print(f"sigwake {args.command}: finding: {e}", file=sys.stderr)
        return FINDING
    except (ValueError, PatchError) as e:  # what the command line asked cannot be (a patch that does not apply)
        print(f"sigwake {args.command}: {e}", file=sys.stderr)
        return USAGE
    except (BuildError, DebianError, DiskFullError, NoResults) as e:
        print(f"sigwake {args.command}: could not test: {e}", file=sys.stderr)
        return COULD_NOT_TEST
    except BisectError as e:
        print(f"sigwake {args.command}: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print(f"sigwake {args.command}: interrupted", file=sys.stderr)
        return INTERRUPTED


def run_command(args: argparse.Namespace) -> int:
    lab = lava_lab(args)
    kernels = tuple(args.kernels or (("default", "host") if lab is None else ("default",)))
    arches = arches_of(args.arch)
    config = RunConfig(REPO, args.build_dir, args.cache, args.results, kernels, flavours_of(args.flavour, arches),
                       arches, tuple(args.apt_source), args.accel, args.repro_timeout_ms, args.boot_timeout, args.repeat,
                       agree_of(args), args.cpus, args.jobs, args.resume, lab, args.peer_selftests)
    # A CI runner's timeout sends SIGTERM: end as for Ctrl-C, with what finished kept and said.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    options = ReportOptions(args.kcidb_origin, args.log_base_url)
    catalogue = catalogue_of(args)
    try:
        summary = run_kernels(config, Progress(quiet=args.quiet))
    except Interrupted as stop:
        write_reports(config.results_dir, options, catalogue)  # of what was kept
        return interrupted(stop, config.results_dir)
    written = write_reports(config.results_dir, options, catalogue)
    reports = sorted({str(p.relative_to(config.results_dir)).split("/")[0] for p in written})
    print(f"recorded in {config.results_dir}/: <kernel-id>.json with console logs; reports: {', '.join(reports)}")
    for warning in summary.warnings:
        print(warning, file=sys.stderr)
    return summary_exit(summary, catalogue)


def catalogue_of(args: argparse.Namespace) -> Catalogue:
    """The cases' facts, from this machine's build of the programs (built first if need be)."""
    return binaries.build(REPO, args.build_dir, Progress(quiet=True)).catalogue


def summary_exit(summary: RunSummary, catalogue: Catalogue, also: gate.Gate | None = None) -> int:
    """Prints the run's summary (the last line counts its findings) and gives its exit code; `also`: what else
    the command found (qa's bisections), counted in the same last line."""
    text = render_summary(summary.results, catalogue, summary.failures)
    judged = gate.of_run(summary.results, catalogue, summary.failures) + (also or gate.Gate())
    if also is not None and (also.findings or also.untested):
        body = text.splitlines()[:-1]
        text = "\n".join([*body, *(f"finding: {f}" for f in also.findings),
                          *(f"not tested: {u}" for u in also.untested), judged.last_line()]) + "\n"
    print(text, end="")
    return judged.exit_code


def interrupted(stop: Interrupted, results_dir: Path) -> int:
    """Says what an interrupted run kept and what it did not; the exit code of Ctrl-C."""
    done = [r.kernel_id for r in stop.summary.results]
    print(f"interrupted: finished and kept in {results_dir}/: {', '.join(done) or 'none'}; "
          f"not finished: {', '.join(stop.summary.unfinished) or 'none'} (run again with --resume)", file=sys.stderr)
    return INTERRUPTED


def lava_jobs_command(args: argparse.Namespace, progress: Progress) -> int:
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
    return NO_FINDING


def qa_command(args: argparse.Namespace) -> int:
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

    signal.signal(signal.SIGTERM, signal.default_int_handler)
    options = ReportOptions(args.kcidb_origin, args.log_base_url)
    catalogue = catalogue_of(args)
    try:
        lines, summary, bisections = run_qa(config, probe_for, progress)
    except Interrupted as stop:
        write_reports(args.results, options, catalogue)  # of what was kept
        return interrupted(stop, args.results)
    write_reports(args.results, options, catalogue)
    print(render_qa(lines), end="")
    return summary_exit(summary, catalogue, bisections)


def report_command(args: argparse.Namespace) -> int:
    options = ReportOptions(args.kcidb_origin, args.log_base_url)
    catalogue = catalogue_of(args)
    if args.format:
        print(render(args.results, args.format, options, catalogue), end="")
        return NO_FINDING
    for path in write_reports(args.results, options, catalogue):
        print(path)
    return NO_FINDING


def fragments_of(args: argparse.Namespace) -> tuple[Path, ...]:
    return tuple(args.fragment) or tuple(kconfig.default_fragments(REPO / "kernel-configs"))


def builder_of(args: argparse.Namespace) -> KernelBuilder:
    return KernelBuilder(args.cache, args.jobs, args.ccache)


def build_command(args: argparse.Namespace, progress: Progress) -> int:
    built_programs = binaries.build(REPO, args.build_dir, progress)
    if args.tree is None:
        print("\n".join(f"{name}: {path}" for name, path in sorted(built_programs.reproducers.items())))
        return 0
    kernel = builder_of(args).build(BuildRequest(args.tree, fragments_of(args), tuple(args.patch)), progress)
    print(f"{kernel.image}\n  tree {kernel.tree_state}, key {kernel.key}, {kernel.seconds} s"
          f"{' (cached)' if kernel.cached else ''}, log {kernel.log}")
    for warning in kernel.warnings:
        print(f"  warning: {warning}")
    return 0


def run_options(args: argparse.Namespace) -> RunOptions:
    accel = qemu.choose_accel(args.accel)
    passes = tuple(p for p in args.passes.split(",") if p)
    unknown = sorted(set(passes) - set(PRIVILEGES))
    if unknown:
        raise ValueError(f"--passes: unknown pass {', '.join(unknown)}; there are {', '.join(PRIVILEGES)}")
    return RunOptions(accel, repeat=args.repeat, agree=agree_of(args), cpus=args.cpus, privileges=passes)


def validate_command(args: argparse.Namespace, progress: Progress) -> int:
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
    print(f"recorded in {write_validation(args.results, record)}")
    print(judged.last_line())
    return judged.exit_code


def own_directory(parent: Path) -> Path:
    """A directory of this command's own under `parent`, so two runs sharing a cache keep their evidence apart."""
    parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=time.strftime("%Y%m%dT%H%M%S-"), dir=parent))


def probe_of(args: argparse.Namespace, progress: Progress) -> Probe:
    program, _, case = args.repro.partition(":")
    built_programs = binaries.build(REPO, args.build_dir, progress).select([program])
    return Probe(built_programs, program, case or program, run_options(args), own_directory(args.cache / "bisect"))


def bisect_command(args: argparse.Namespace, progress: Progress) -> int:
    probe = probe_of(args, progress)
    if args.debian:
        report = bisect_debian(KernelCache(args.cache), args.debian, probe, progress, args.jobs, split=args.split)
        over = f"Debian's {args.debian} packages"
    elif args.tree is None or args.old is None or args.new is None:
        print("sigwake bisect: --tree, --old and --new (or --debian FLAVOUR)", file=sys.stderr)
        return USAGE
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
    print(f"recorded in {write_bisection(args.results, record, report.kept())}")
    print(report.summary(probe.case))
    for finding in judged.findings:
        print(f"finding: {finding}")
    print(judged.last_line())
    return judged.exit_code


if __name__ == "__main__":
    sys.exit(main())
