"""The command line's shared options: defined once (cli.py's option helpers), so every command that takes one
takes it with the same default and type."""

from __future__ import annotations

from pathlib import Path

from sigwake.commands.cli import REPO, agree_of, default_cache, parser
from sigwake.core import protocol

COMMANDS = {  # each command with the arguments it cannot go without
    "build": [], "validate-patch": ["--tree", "t", "--patch", "p"], "bisect": ["--repro", "watermark_sigio"],
    "run": [], "lava-jobs": ["out"], "qa": [], "report": [],
}


def test_every_command_that_takes_a_shared_option_takes_it_with_one_default() -> None:
    seen: dict[str, set[object]] = {}
    for command, required in COMMANDS.items():
        args = vars(parser().parse_args([command, *required]))
        for option in ("cache", "results", "accel", "repeat", "agree", "cpus", "jobs", "quiet"):
            if option in args:
                seen.setdefault(option, set()).add(args[option])
    assert seen["cache"] == {default_cache()} and seen["results"] == {REPO / "results"}
    assert seen["accel"] == {"auto"} and len(seen["repeat"]) == 1 and len(seen["jobs"]) == 1
    assert seen["agree"] == {protocol.DEFAULT_AGREE, 0}
    # the gates run every repeat unless told otherwise; the matrix stops a case whose first runs agree
    parsed = {c: vars(parser().parse_args([c, *COMMANDS[c]])) for c in COMMANDS}
    gates = {c: args["agree"] for c, args in parsed.items() if "agree" in args}
    assert gates == {"validate-patch": 0, "bisect": 0, "run": protocol.DEFAULT_AGREE,
                     "lava-jobs": protocol.DEFAULT_AGREE, "qa": protocol.DEFAULT_AGREE}
    assert seen["quiet"] == {False} and seen["cpus"] == {1}
    # and each is the one thing it says: a path is a Path, a count an int
    args = parser().parse_args(["qa", "--cache", "c", "--results", "r", "--repeat", "5", "--jobs", "3", "--quiet",
                                "--cpus", "2"])
    assert (args.cache, args.results, args.repeat, args.jobs, args.quiet, args.cpus) == (
        Path("c"), Path("r"), 5, 3, True, 2)
    # --agree 0 is every run, --repeat's
    assert agree_of(parser().parse_args(["run", "--repeat", "4", "--agree", "0"])) == 4
    assert agree_of(parser().parse_args(["run", "--repeat", "4", "--agree", "2"])) == 2
