"""The protocol between reproducers, runner and harness, read from
repro/protocol.json (the C++ side is generated from the same file): the verdict
rules, the pass names, the defaults, the kernel command-line keys and the keys of
the runner's report."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[3] / "repro" / "protocol.json"


@dataclass(frozen=True)
class VerdictRule:
    word: str
    kernel: bool  # says what the kernel did (error: what the reproducer did)
    ok: bool  # the KTAP result line says ok
    directive: str  # SKIP, ERROR or ""
    exit_code: int  # kselftest: 0 pass, 1 fail, 4 skip


_DATA = json.loads(SOURCE.read_text())

RULES: dict[str, VerdictRule] = {
    v["word"]: VerdictRule(v["word"], v["kernel"], v["result"] == "ok", v["directive"], v["exit"])
    for v in _DATA["verdicts"]
}
HARNESS_VERDICTS: tuple[str, ...] = tuple(_DATA["harness_verdicts"])
PASSES: tuple[str, ...] = tuple(_DATA["passes"])
DEFAULT_REPEAT: int = _DATA["defaults"]["repeat"]
DEFAULT_AGREE: int = _DATA["defaults"]["agree"]  # adaptive repeats: a case whose first N runs agree stops there
DEFAULT_TIMEOUT_MS: int = _DATA["defaults"]["timeout_ms"]
DEFAULT_PEER_TIMEOUT_MS: int = _DATA["defaults"]["peer_timeout_ms"]  # each upstream selftest program's deadline
KEYS: dict[str, str] = dict(_DATA["command_line"])
REPORT: dict[str, str] = dict(_DATA["report_keys"])  # the runner's report: `# <key>=<value>` lines
TOKEN_FILE: str = _DATA["token_file"]
LAVA_FILE: str = _DATA["lava_file"]  # a LAVA job's table of what its lab shows for each run (judge/lava_results.py)
