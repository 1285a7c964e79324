"""The command line's grammar: every command with its description, examples and exit codes, and every option
with its help and default, each shared option defined once. cli.py carries out what is parsed here."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..core import protocol
from ..core.debian_names import FLAVOURS
from ..core.exit_codes import MEANING, TOOL_MEANING
from ..kernels import kconfig
from ..reports.report import FORMATS
from ..targets.options import PRIVILEGES
from .bisect import SPLIT

REPO = Path(__file__).resolve().parents[3]


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(os.environ.get("SIGWAKE_CACHE", Path(base) / "sigwake"))


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs as written (examples keep their lines); every option's default said, unless its
    help says it in words."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        # a flag's default is off; a required option has none
        if not action.option_strings or "default:" in text or action.nargs == 0 or action.required:
            return text
        if action.default is None or action.default == []:
            return text + " (default: none)"
        return text + " (default: %(default)s)"


@dataclass(frozen=True)
class Command:
    name: str
    summary: str  # its line in the top-level usage
    description: str
    examples: tuple[str, ...]
    codes: dict[int, str] = field(default_factory=lambda: MEANING)  # the exit codes it can end with

    def epilog(self) -> str:
        return "\n".join(["examples:", *(f"  {e}" for e in self.examples), "", "exit codes:",
                          *(f"  {code:<4}{meaning}" for code, meaning in self.codes.items())])


COMMANDS = (
    Command("run", "test kernels and record the matrix under results/ (the main job)",
            "Boot each kernel under QEMU (or as a LAVA job), run every case in each privilege pass, record each "
            "kernel's verdicts\nunder --results with its console, and write every report (summary, matrix.md, "
            "KTAP, JUnit, KCIDB, index.html).",
            ("./sigwake run", "./sigwake run --kernel linux-image-6.12.118+deb13-amd64 --kernel host",
             "./sigwake run --kernel host --case 'watermark_*' --case overflow_sigio",
             "./sigwake run --kernel /boot/vmlinuz-6.12.118+deb13-amd64 --json",
             "./sigwake run --kernel ./linux-image-6.12.118+deb13-amd64_6.12.118-1_amd64.deb")),
    Command("validate-patch", "build a tree without and with patches, boot both, and compare",
            "Build the tree as it is (the base) and with the patches applied, boot both with the same programs, "
            "and report\neach case the patches regressed, changed or lost, and each kernel report only the patched "
            "kernel printed.\nA case the base could not judge is never passed.",
            ("./sigwake validate-patch --tree ~/linux --patch 0001-perf-fix.patch",
             "./sigwake validate-patch --tree ~/linux --patch series.mbox --repro watermark_sigio --passes root")),
    Command("bisect", "the first commit, or Debian package, whose behaviour changed",
            "Bisect a case's verdict between two commits of a tree (built from source), or over Debian's packages "
            "of a flavour\n(fetched). Every candidate runs the case --repeat times; a candidate whose runs split is "
            "marked by --split.",
            ("./sigwake bisect --tree ~/linux --old v6.9 --new v6.10 --repro watermark_sigio",
             "./sigwake bisect --debian amd64 --repro watermark_sigio")),
    Command("qa", "every flavour, the newest package of each suite, and since which package",
            "Distro QA: the newest kernel package of every flavour in every suite of the default series, judged "
            "as run judges;\nfor each flavour whose headline verdict differs between suites, the package since "
            "which it changed (a bisection).",
            ("./sigwake qa", "./sigwake qa --arch amd64,arm64 --flavour cloud --no-bisect")),
    Command("report", "the reports again, from the stored results (no re-run)",
            "Write every report again from the results folder, or print one format. The cases' facts come from "
            "this machine's\nbuild of the programs.",
            ("./sigwake report", "./sigwake report --format summary"), TOOL_MEANING),
    Command("build", "build the reproducers (Meson); with --tree, a kernel from source",
            "Build the reproducers and the guest's init into --build-dir; with --tree, also a kernel (tinyconfig, "
            "or --config,\nand the fragments), cached by the tree's state and its configuration.",
            ("./sigwake build", "./sigwake build --tree ~/linux --fragment kernel-configs/smp.config",
             "./sigwake build --tree ~/linux --config /boot/config-6.12.118+deb13-amd64"), TOOL_MEANING),
    Command("lava-jobs", "write a LAVA job definition per kernel (and its files); submit nothing",
            "Write one LAVA job definition per kernel, with the kernel, the initramfs and each job's token, for a "
            "lab to run\n(./sigwake run --target lava submits and waits itself).",
            ("./sigwake lava-jobs jobs/", "./sigwake lava-jobs jobs/ --kernel linux-image-6.1.0-57-amd64"),
            TOOL_MEANING),
)
# The launcher's own commands (./sigwake runs them in bash), listed here so the usage names every command.
LAUNCHER = (
    Command("setup", "install the Debian packages sigwake needs (apt, as root)",
            "Install every Debian package the commands need; without root, name them.", ("./sigwake setup",),
            {0: "everything is installed", 1: "packages are missing and this user may not install them"}),
    Command("test", "the whole test suite: GoogleTest (meson test), then pytest (arguments go to pytest)",
            "Install what the tests need, build, run the GoogleTest tests, then pytest over harness/tests.",
            ("./sigwake test", "./sigwake test -m 'not slow'", "./sigwake test --junitxml=junit.xml"),
            {0: "every test passed", 1: "a test failed (otherwise meson's or pytest's own codes)"}),
)
TOP = ("sigwake: kernel-bug reproducers for FASYNC signals (SIGIO) on perf ring-buffer wakeups, booted under "
       "QEMU on many\nkernels, each kernel recorded as delivering or failing to deliver them.")


def cache_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cache", type=Path, default=default_cache(),
                   help="downloaded packages, built kernels and programs, consoles ($SIGWAKE_CACHE)")


def results_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--results", type=Path, default=REPO / "results", help="where results and reports are written")


def jobs_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help=what)


def quiet_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quiet", action="store_true", help="no progress lines")


def json_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true",
                   help="the summary and the findings as one JSON document on stdout (everything else on stderr)")


def boot_options(p: argparse.ArgumentParser, repeat_per: str = "kernel", agree: int = protocol.DEFAULT_AGREE) -> None:
    """`agree`: 0 in the gates (validate-patch, bisect): every case runs --repeat times, so a case wrong in one
    run of five is seen as often as five runs can see it (docs/reproducers.md, "Privilege and repetition")."""
    p.add_argument("--accel", choices=("auto", "kvm", "tcg"), default="auto",
                   help="QEMU's accelerator; auto: KVM when /dev/kvm runs a guest's code, else TCG")
    p.add_argument("--repeat", type=int, default=protocol.DEFAULT_REPEAT,
                   help=f"runs of each case per {repeat_per}, at most")
    p.add_argument("--agree", type=int, default=agree,
                   help="a case whose first N runs agree stops there; runs that split go on to --repeat "
                        "(0: always --repeat runs)")


def cpus_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cpus", type=int, default=1,
                   help="guest vCPUs (inherit_time_other_cpu needs 2; more than one under TCG: docs/how-a-boot-works.md)")


def kernel_source_options(p: argparse.ArgumentParser, tree_required: bool = False) -> None:
    p.add_argument("--tree", type=Path, required=tree_required, help="a git kernel tree")
    p.add_argument("--config", type=Path, metavar="FILE",
                   help="a full .config to start from, e.g. a distro's (default: tinyconfig); the fragments are "
                        "merged on top")
    p.add_argument("--fragment", action="append", type=Path, default=[],
                   help="config fragment(s) merged on the base; repeatable (default: kernel-configs/ "
                        + ", ".join(kconfig.DEFAULT_FRAGMENTS) + ")")
    cache_option(p)
    p.add_argument("--ccache", type=Path, default=None, help="ccache directory (default: <cache>/ccache)")
    jobs_option(p, "make jobs; also, when > 1, validate-patch boots base and patched at once and "
                   "bisect --debian judges that many packages per round (default: the cores, %(default)s)")


def case_loop_options(p: argparse.ArgumentParser, passes: tuple[str, ...], agree: int = protocol.DEFAULT_AGREE) -> None:
    boot_options(p, agree=agree)
    cpus_option(p)
    p.add_argument("--passes", default=",".join(passes),
                   help=f"privilege passes, comma-separated, of {', '.join(PRIVILEGES)}")


def split_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--split", choices=SPLIT, default="old",
                   help="a kernel whose repeated runs split: old marks it old when any run shows the old verdict (it "
                        "still reproduces the old behaviour), new likewise for the new verdict, skip never judges "
                        "it; each such step says so")


def apt_source_option(p: argparse.ArgumentParser, searched_for: str) -> None:
    p.add_argument("--apt-source", action="append", default=[], metavar="LINE",
                   help='a distro\'s own repository, as a sources.list line: "deb [signed-by=KEYRING] URL SUITE '
                        f'COMPONENT"; repeatable; searched before Debian\'s suites for {searched_for} (kept in a '
                        'private apt state, never the system\'s)')


def lava_options(p: argparse.ArgumentParser) -> None:
    lava = p.add_argument_group("LAVA (--target lava)")
    lava.add_argument("--lava", metavar="URL", help="the LAVA server, e.g. https://lava.example.org")
    lava.add_argument("--token", help="an API token of a user who may submit jobs (default: $SIGWAKE_LAVA_TOKEN)")
    lava.add_argument("--device-type", default="qemu", help="the lab's QEMU device type")
    lava.add_argument("--lava-files", type=Path, help="where jobs' kernels and initramfs files are put "
                                                      "(default: <cache>/lava-files)")
    lava.add_argument("--lava-files-url", help="the URL the workers fetch --lava-files from "
                                               "(default: its file: URL, for workers that share this filesystem)")
    lava.add_argument("--lava-start-timeout", type=float, default=1800.0,
                      help="seconds a job may wait in the queue before it is canceled and recorded")


def report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kcidb-origin", default="sigwake", help="KCIDB origin of every object")
    p.add_argument("--log-base-url", help="where the console logs are served, for KCIDB log_url (default: none, no log_url)")


def kernel_option(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument("--kernel", action="append", dest="kernels", metavar="SPEC",
                   help="default (the Debian set), host, a path to a bzImage/vmlinuz/vmlinux or to a kernel package "
                        "(FILE.deb), or a Debian package name (optionally suite:name); repeatable "
                        f"(default: {default})")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="sigwake", description=TOP, formatter_class=Formatter,
                                  epilog="Each command's options, examples and exit codes: ./sigwake COMMAND --help")
    top.add_argument("--version", action="store_true", help="sigwake's version (git describe) and exit")
    top.add_argument("--build-dir", type=Path, default=REPO / "build", help="where Meson builds the programs")
    sub = top.add_subparsers(dest="command", title="commands", metavar="COMMAND")
    made = {c.name: sub.add_parser(c.name, help=c.summary, description=c.description, epilog=c.epilog(),
                                   formatter_class=Formatter) for c in (*COMMANDS, *LAUNCHER)}

    run = made["run"]
    kernel_option(run, "default and host; with --target lava, default")
    boot_options(run, "privilege pass")
    results_option(run)
    cache_option(run)
    run.add_argument("--repro-timeout-ms", type=int, default=protocol.DEFAULT_TIMEOUT_MS,
                     help="milliseconds per reproducer run")
    run.add_argument("--boot-timeout", type=float, default=0.0,
                     help="seconds per boot (default: 60 + 8 per program run, times the architecture's slowdown, "
                          "plus a reproducer's deadline and the selftests')")
    cpus_option(run)
    quiet_option(run)
    jobs_option(run, "kernels run at once, each its own QEMU, or LAVA jobs in flight (default: the cores, "
                     "%(default)s)")
    run.add_argument("--case", action="append", dest="cases", metavar="NAME", default=[],
                     help="only this case (a glob, e.g. 'watermark_*'; a program without cases by its name); "
                          "repeatable (default: every case)")
    run.add_argument("--resume", action="store_true",
                     help="keep kernels already recorded for the same image and the same programs")
    run.add_argument("--peer-selftests", action="store_true",
                     help="also run the upstream perf selftests (watermark_signal, sigtrap_threads, remove_on_exec "
                          "from Debian's linux-source) as root after the cases, and compare them with the cases")
    run.add_argument("--flavour", default="generic",
                     help="flavours of the default set, comma-separated: " + ", ".join(FLAVOURS["arm64"]) +
                          " (16k: arm64 only), or all")
    run.add_argument("--arch", default="amd64", help="architectures of the default set: amd64, arm64")
    apt_source_option(run, "--kernel PACKAGE")
    run.add_argument("--target", choices=("qemu", "lava"), default="qemu",
                     help="where the images boot: QEMU here, or as jobs of a LAVA lab (--lava); "
                          "the host kernel always runs natively")
    lava_options(run)
    report_options(run)
    json_option(run)

    validate = made["validate-patch"]
    kernel_source_options(validate, tree_required=True)
    case_loop_options(validate, PRIVILEGES, agree=0)
    validate.add_argument("--patch", action="append", type=Path, required=True, help="format-patch or mbox; repeatable")
    validate.add_argument("--repro", action="append", default=[],
                          help="reproducer program(s) to run; repeatable (default: all)")
    results_option(validate)
    json_option(validate)

    bisect = made["bisect"]
    kernel_source_options(bisect)
    case_loop_options(bisect, ("root",), agree=0)
    bisect.add_argument("--old", help="a commit with the old behaviour (before the fix or the regression)")
    bisect.add_argument("--new", help="a commit with the new behaviour")
    bisect.add_argument("--debian", metavar="FLAVOUR", help="bisect Debian's packages of a flavour, e.g. amd64")
    bisect.add_argument("--repro", required=True, help="PROGRAM or PROGRAM:CASE, e.g. watermark_sigio")
    split_option(bisect)
    results_option(bisect)
    json_option(bisect)

    qa = made["qa"]
    qa.add_argument("--arch", default="amd64", help="architectures, comma-separated: amd64, arm64")
    qa.add_argument("--flavour", default="all", help="flavours, comma-separated, or all")
    qa.add_argument("--suite", action="append", dest="suites", metavar="SUITE",
                    help="limit to these suites of the default series; repeatable (default: every one)")
    qa.add_argument("--no-bisect", action="store_true", help="only the newest packages; name no boundary")
    split_option(qa)
    apt_source_option(qa, "the flavours' packages")
    results_option(qa)
    cache_option(qa)
    boot_options(qa)
    cpus_option(qa)
    jobs_option(qa, "kernels booted at once (default: the cores, %(default)s)")
    quiet_option(qa)
    report_options(qa)
    json_option(qa)

    report = made["report"]
    results_option(report)
    report.add_argument("--format", choices=FORMATS,
                        help="print this one format (kcidb: what kcidb-submit takes) (default: write every file)")
    report_options(report)

    build = made["build"]
    kernel_source_options(build)
    build.add_argument("--patch", action="append", type=Path, default=[], help="git format-patch or mbox; repeatable")

    jobs = made["lava-jobs"]
    jobs.add_argument("directory", type=Path, help="where <kernel-id>.yaml and jobs.json (each job's token) go")
    kernel_option(jobs, "the Debian set")
    cache_option(jobs)
    jobs.add_argument("--device-type", default="qemu", help="the lab's QEMU device type")
    jobs.add_argument("--lava-files-url", help="the URL the workers fetch DIRECTORY/files from "
                                               "(default: its file: URL, for a worker on this machine)")
    case_loop_options(jobs, PRIVILEGES)
    return top
