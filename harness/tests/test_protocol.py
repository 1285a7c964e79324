"""One test holds both sides to repro/protocol.json: the C++ side as compiled in
(sigwake-run --protocol prints it), the Python side as the harness uses it."""

from __future__ import annotations

import json
import subprocess

from sigwake.core import protocol
from sigwake.parse.outcome import case_verdicts
from sigwake.programs.binaries import Binaries
from sigwake.parse.ktap import parse_program
from sigwake.core.verdicts import Verdict, program_exit_code


def test_cpp_and_python_follow_the_protocol_file(built: Binaries) -> None:
    data = json.loads(protocol.SOURCE.read_text())
    printed = subprocess.run([str(built.runner), "--protocol"], capture_output=True, text=True, timeout=30,
                             check=True).stdout.splitlines()
    expected = [f"verdict {v['word']} {'ok' if v['result'] == 'ok' else 'not-ok'} {v['directive'] or '-'} "
                f"{v['exit']} {'kernel' if v['kernel'] else 'harness'}" for v in data["verdicts"]]
    expected += [f"passes {','.join(data['passes'])}", *(f"default {k} {v}" for k, v in data["defaults"].items()),
                 *(f"key {k} {v}" for k, v in data["command_line"].items()), f"token_file {data['token_file']}",
                 f"lava_file {data['lava_file']}",
                 *(f"report {k} {v}" for k, v in data["report_keys"].items())]
    assert printed == expected  # the generated header says what the file says

    words = [v["word"] for v in data["verdicts"]] + data["harness_verdicts"]
    assert [v.value for v in Verdict] == words  # the Python names cover every word, in order, and no other
    for v in data["verdicts"]:
        verdict = Verdict(v["word"])
        assert verdict.is_ok is (v["result"] == "ok") and verdict.is_kernel_verdict is v["kernel"]
        assert program_exit_code([verdict]) == v["exit"]
    assert not any(Verdict(w).is_kernel_verdict or Verdict(w).is_ok for w in data["harness_verdicts"])


def test_every_verdict_a_reproducer_prints_reads_back_the_same(built: Binaries) -> None:
    # What repro/lib/ktap.cc prints for each rule is what the parser accepts for it.
    for rule in protocol.RULES.values():
        directive = f" # {rule.directive} why" if rule.directive else ""
        lines = ["KTAP version 1", "1..1", f"# verdict={rule.word}", "# reason=why",
                 f"{'ok' if rule.ok else 'not ok'} 1 a_case{directive}"]
        ((_, verdict, reason, _),) = case_verdicts(parse_program(lines))
        assert (verdict.value, reason) == (rule.word, "why")
