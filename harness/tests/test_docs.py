"""The docs as a newcomer reads them: the README short, every command it shows a command the harness takes
(parsed, and its --help printed), every link to a file that is there, and the generated case catalogue not
stale."""

from __future__ import annotations

import re
import shlex

import pytest

from sigwake.commands.arguments import COMMANDS, LAUNCHER, parser
from sigwake.commands.cli import REPO
from sigwake.core.exit_codes import MEANING, exit_code
from sigwake.programs.catalogue import Catalogue
from sigwake.reports.render_cases import render_cases

README = REPO / "README.md"
DOCS = sorted((REPO / "docs").glob("*.md"))


def code_blocks(text: str) -> list[tuple[str, str]]:
    """Each fenced block: its language ("" for none) and its text."""
    return re.findall(r"^```(\w*)\n(.*?)^```$", text, re.S | re.M)


def shown_commands(text: str) -> list[list[str]]:
    """Every `./sigwake ...` line of a sh block, as words, comments dropped."""
    found = []
    for block in (body for lang, body in code_blocks(text) if lang == "sh"):
        for line in block.replace("\\\n", " ").splitlines():
            if line.startswith("./sigwake"):
                found.append(shlex.split(line, comments=True))
    return found


def test_the_readme_is_short_and_shows_the_two_commands_and_the_four_jobs() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    shown = [words[1] for words in shown_commands(text)]
    assert shown[:2] == ["run", "test"]
    assert {"run", "validate-patch", "bisect", "qa"} <= set(shown)
    outputs = [body for lang, body in code_blocks(text) if not lang]
    assert len(outputs) == 4 and not any(re.search(r"@[A-Z_]+@", o) for o in outputs)  # each job's output, filled in


@pytest.mark.parametrize("words", shown_commands(README.read_text()) +
                         [w for doc in DOCS for w in shown_commands(doc.read_text())], ids=" ".join)
def test_every_command_the_docs_show_is_one_the_harness_takes(words: list[str],
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    command = words[1]
    if command in {c.name for c in LAUNCHER}:
        return  # carried out by ./sigwake itself, its arguments pytest's
    assert command in {c.name for c in COMMANDS}
    parser().parse_args(words[1:])  # a usage error exits 2 here
    with pytest.raises(SystemExit) as helped:
        parser().parse_args([command, "--help"])
    assert helped.value.code == 0 and "exit codes:" in capsys.readouterr().out


LAST_LINE = re.compile(r"^findings: (none|(\d+) \(.+\))(; not tested: (\d+))?$")


@pytest.mark.parametrize("job", ["Check kernels", "Validate a patch", "Bisect", "Distro QA"])
def test_each_job_shows_its_command_then_its_output_ending_in_the_gates_line_and_its_exit_code(job: str) -> None:
    """The output follows its command, ends as a gate's output ends, and the exit code said beside it is the one
    that line gives (exit_codes.exit_code)."""
    section = README.read_text().split(f"\n## {job}\n")[1].split("\n## ")[0]
    blocks = code_blocks(section)
    assert [lang for lang, _ in blocks[:2]] == ["sh", ""], job
    output = blocks[1][1].strip()
    matched = LAST_LINE.match(output.splitlines()[-1])
    assert matched, f"{job}: its output does not end with the gate's last line"
    said = re.search(r"exit code (\d+)", section.split(blocks[1][1])[1])
    assert said and int(said.group(1)) == exit_code(int(matched.group(2) or 0), int(matched.group(4) or 0)), job


def test_every_relative_link_leads_to_a_file() -> None:
    for doc in [README, *DOCS]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", doc.read_text()):
            assert (doc.parent / target).exists(), f"{doc.name} links {target}"


def test_the_case_catalogue_is_generated_from_the_facts_and_not_stale(catalogue: Catalogue) -> None:
    assert (REPO / "docs" / "cases.md").read_text() == render_cases(catalogue), \
        "docs/cases.md is stale: PYTHONPATH=harness /usr/bin/python3 -m sigwake.reports.render_cases > docs/cases.md"


def test_the_readmes_exit_codes_are_the_codes_rule() -> None:
    rows = re.findall(r"^\| (\d+) \| (.*) \|$", README.read_text(), re.M)
    assert {int(code): meaning for code, meaning in rows} == MEANING
