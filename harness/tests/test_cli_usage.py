"""The command line as kernel tools have it: a usage naming every command, --version from git describe, and
per command a description, examples that parse and the exit codes; every option with its help and default."""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
from pathlib import Path

import pytest

from sigwake.commands.arguments import COMMANDS, LAUNCHER, parser
from sigwake.commands.cli import REPO, main
from sigwake.core.exit_codes import MEANING


def subparsers() -> dict[str, argparse.ArgumentParser]:
    (sub,) = [a for a in parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def test_the_usage_names_every_command_and_version_is_git_describe(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    usage = capsys.readouterr().err
    for command in (*COMMANDS, *LAUNCHER):
        assert f"    {command.name}" in usage and command.summary.split()[0] in usage
    assert set(subparsers()) == {c.name for c in (*COMMANDS, *LAUNCHER)}
    assert main(["--version"]) == 0
    described = subprocess.run(["git", "-C", str(REPO), "describe", "--tags", "--always", "--abbrev=12"],
                               capture_output=True, text=True, check=True).stdout.strip()
    assert capsys.readouterr().out.startswith(f"sigwake {described}")


@pytest.mark.parametrize("command", [c.name for c in (*COMMANDS, *LAUNCHER)])
def test_each_command_has_a_description_examples_that_parse_and_its_exit_codes(command: str) -> None:
    text = subparsers()[command].format_help()
    spec = next(c for c in (*COMMANDS, *LAUNCHER) if c.name == command)
    assert spec.description.split("\n")[0] in text and "examples:\n" in text and "exit codes:\n" in text
    for code, meaning in spec.codes.items():
        assert f"  {code:<4}{meaning}" in text
    for example in spec.examples:
        words = shlex.split(example)
        assert words[:2] == ["./sigwake", command]
        # a usage error would exit 2 here; the launcher's own commands pass theirs on (pytest's)
        parsed = parser().parse_known_args(words[1:])[0] if spec in LAUNCHER else parser().parse_args(words[1:])
        assert parsed.command == command


def test_the_gates_list_every_exit_code_and_the_tools_none_they_cannot_end_with() -> None:
    for spec in COMMANDS:
        if spec.name in ("run", "qa", "validate-patch", "bisect"):
            assert spec.codes == MEANING
        else:
            assert 1 not in spec.codes and spec.codes[0] == "done"


@pytest.mark.parametrize("command", [c.name for c in COMMANDS])
def test_every_option_says_what_it_is_and_its_default(command: str) -> None:
    sub = subparsers()[command]
    text = "".join(sub.format_help().split())  # as wrapped, at spaces and hyphens
    for action in sub._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, f"{command} {action.option_strings or action.dest}: no help"
        if action.option_strings and action.nargs != 0 and not action.required:  # a flag is off
            help_text = sub._get_formatter()._expand_help(action)
            assert "default:" in help_text and "".join(help_text.split()) in text, f"{command} {help_text}"


def test_the_launchers_own_commands_are_not_carried_out_by_the_harness(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test"]) == 2 and main(["setup"]) == 2
    assert "the launcher's own command: ./sigwake test" in capsys.readouterr().err


def test_a_config_that_is_not_there_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["build", "--tree", "/nonexistent", "--config", "/nonexistent/config-6.12"]) == 2
    assert "--config /nonexistent/config-6.12: no such file" in capsys.readouterr().err


def test_sigwakes_own_failure_is_could_not_test_with_its_document(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """An error no command expects (a LAVA server's socket, a lock, a bug) is never a pass nor the kernel's
    finding: exit 3, said with its traceback, and --json's document agrees."""
    from sigwake.commands import cli

    def broken(*args: object, **kwargs: object) -> None:
        raise ConnectionResetError("the lab hung up")
    monkeypatch.setattr(cli, "run_kernels", broken)
    assert main(["run", "--kernel", "host", "--results", str(tmp_path), "--quiet", "--json"]) == 3
    said = capsys.readouterr()
    document = json.loads(said.out)
    assert document["exit_code"] == 3 and document["findings"] == []
    assert document["not_tested"] == ["could not test: sigwake failed: ConnectionResetError: the lab hung up"]
    assert document["last_line"] == "findings: none; not tested: 1" and "Traceback" in said.err


def test_version_runs_no_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as usage:
        main(["--version", "run"])
    assert usage.value.code == 2 and "--version is said alone" in capsys.readouterr().err
