"""Golden console logs (harness/tests/data/consoles/README.md), as kunit_parser keeps its: each real or
torn console is read by the one framed-console reader, the one KTAP reader and the splat reader, and what
they read must be what `<log>.expected.json` says. The C++ tests read the same logs
(repro/tests/golden_console_test.cc). SIGWAKE_GOLDEN=regenerate writes the expected files again."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from sigwake.parse import console, ktap, splats
from sigwake.parse.attribution import attribute
from sigwake.targets.lava_log import parse_log

DATA = Path(__file__).parent / "data"
LOGS = {
    "framed": DATA / "consoles" / "framed.log",
    "torn": DATA / "consoles" / "torn.log",
    "lava": DATA / "consoles" / "lava.log",
    "panicked": DATA / "crash-cloud-6.12.95" / "6.12.95+deb12-cloud-amd64.console.log",
}


def whole_frames(text: str) -> int:
    """Frames whose line is whole and whose CRC holds, as the C++ test counts them."""
    return sum(1 for line in text.split("\n")
               if (m := console.FRAME.fullmatch(line.rstrip("\r"))) and console.crc_holds(m, m["payload"]))


def read(name: str) -> dict[str, Any]:
    text = LOGS[name].read_text(errors="replace")
    lava = None
    if name == "lava":
        log = parse_log(text)
        lava = {"result": log.result, "error": log.error, "unreadable": log.unreadable}
        text = log.console
    token = console.likeliest_token(text)
    unframed = console.unframe(text, token)
    report = ktap.parse_runner(unframed.payloads, unframed.lines)
    found = attribute(splats.find(text), report.runs)
    return {
        "lava": lava,
        "whole_frames": whole_frames(text),
        "payloads": len(unframed.payloads), "rejected": unframed.rejected, "missing": unframed.missing,
        "release": report.release, "plan": report.plan, "done": report.done, "paranoid": report.paranoid,
        "runs": [{"program": r.program, "case": r.case, "privilege": r.privilege, "index": r.index,
                  "exit": r.exit_code, "result": r.result.name if r.result else None,
                  "ok": r.result.ok if r.result else None, "lines": [r.console_line, r.console_end],
                  "tainted": [r.tainted_before, r.tainted_after], "kernel_path": r.kernel_path,
                  "problems": r.document.problems,
                  "cases": [{"name": c.name, "verdict": c.stated_verdict, "line": c.result.line if c.result else 0,
                             "evidence": c.evidence} for c in r.document.cases]} for r in report.runs],
        "document_problems": ktap.read_numbered(list(zip(unframed.lines, unframed.payloads))).all_problems(),
        "splats": [{"title": s.title, "kind": s.kind, "line": s.console_line, "fatal": s.fatal, "case": s.case,
                    "privilege": s.privilege} for s in found],
    }


def where_aside(read_log: dict[str, Any]) -> list[dict[str, Any]]:
    """The runs without their console lines (a torn line or LAVA's log moves them)."""
    return [{**{k: v for k, v in r.items() if k != "lines"},
             "cases": [{k: v for k, v in c.items() if k != "line"} for c in r["cases"]]} for r in read_log["runs"]]


@pytest.mark.parametrize("name", list(LOGS))
def test_each_golden_console_reads_as_it_always_has(name: str) -> None:
    expected = DATA / "consoles" / f"{name}.expected.json"
    got = json.loads(json.dumps(read(name)))
    if os.environ.get("SIGWAKE_GOLDEN") == "regenerate":
        expected.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    assert got == json.loads(expected.read_text()), f"{LOGS[name]} reads otherwise than {expected}"


def test_the_golden_consoles_say_what_their_names_promise() -> None:
    framed, torn, lava, panicked = (read(n) for n in ("framed", "torn", "lava", "panicked"))
    assert framed["done"] and framed["missing"] == [] and framed["rejected"] == 0
    assert [r["result"] for r in framed["runs"]] == ["watermark_poll.watermark_poll [root run 1]",
                                                     "watermark_poll.watermark_poll_without_ring [root run 1]"]
    assert torn["missing"] == [40] and torn["payloads"] == framed["payloads"] - 1  # frame 13 mended, 40 lost
    assert where_aside(torn)[0] == where_aside(framed)[0] and torn["runs"][1]["exit"] is None
    assert lava["lava"]["result"] == "pass" and lava["done"]
    assert [{k: v for k, v in r.items() if k != "kernel_path"} for r in where_aside(lava)] == [
        {k: v for k, v in r.items() if k != "kernel_path"} for r in where_aside(framed)]  # another boot: its own counts
    assert not panicked["done"] and any(s["fatal"] for s in panicked["splats"])
    assert any(s["case"] is not None for s in panicked["splats"])  # a report while a case ran is that case's
