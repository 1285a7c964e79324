"""Records of an older schema, brought up to this one on reading, as kcidb-io
upgrades its I/O data step by step. Kernel results, schema 2 -> 3: the kernel
reports (splats) are read from the console log kept beside the file; with no
log, none are known and the file says so in its boot warnings. 3 -> 4: the
runner's `qemu` (QEMU's version) is its `machine`, which names a lab's device
too. 4 -> 5: no peers ran (the upstream selftests' results are new). 5 -> 6: the kernel started when its
console log shows its banner, or when our init ran. 6 -> 7: no target failure was told apart (every boot
ended by the kernel or by sigwake). 7 -> 8: no report names its task or, outside every case, its place. 8 -> 9: no
report's timestamp was kept. 9 -> 10: every case was run (no run --case globs). 10 -> 11: no built tree's remote, branch or patchset, and no
case's start time, was kept. 11 -> 12: no selftest's start time was kept. QA, the bare list of lines -> schema 1: the same lines under a version."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..parse import console
from ..parse import ktap
from ..parse import splats
from ..parse.attribution import attribute


def schema_2_to_3(data: dict[str, Any], console_log: Path) -> dict[str, Any]:
    upgraded = dict(data, schema=3)
    if not console_log.exists():
        upgraded["splats"] = []
        upgraded["boot"] = dict(data["boot"], warnings=[*data["boot"].get("warnings", []),
                                                        f"schema 2 file without its console log ({console_log.name}): "
                                                        "its kernel reports cannot be read again"])
        return upgraded
    text = console_log.read_text(errors="replace")
    unframed = console.unframe(text, console.likeliest_token(text))
    report = ktap.parse_runner(unframed.payloads, unframed.lines)
    upgraded["splats"] = [asdict(s) for s in attribute(splats.find(text, frozenset(report.continued)), report.runs)]
    return upgraded


def schema_3_to_4(data: dict[str, Any]) -> dict[str, Any]:
    runner = {("machine" if k == "qemu" else k): v for k, v in data["runner"].items()}
    return dict(data, schema=4, runner=runner)


def schema_4_to_5(data: dict[str, Any]) -> dict[str, Any]:
    return dict(data, schema=5, peers=[])


def schema_5_to_6(data: dict[str, Any], console_log: Path) -> dict[str, Any]:
    """Schema 5 boots printed no banner (quiet loglevel=4): a kernel counts as started unless schema 5 judged
    it untested (a failed boot with no report and no init), and then only when its console shows the banner."""
    boot = data["boot"]
    text = console_log.read_text(errors="replace") if console_log.exists() else ""
    untested = boot["status"] == "boot-failed" and not data.get("splats") and boot.get("init_uptime_ms") is None
    started = not untested or console.kernel_banner(text) is not None
    return dict(data, schema=6, boot=dict(boot, kernel_started=started))


def schema_6_to_7(data: dict[str, Any]) -> dict[str, Any]:
    return dict(data, schema=7, boot=dict(data["boot"], target_failed=""))


def schema_7_to_8(data: dict[str, Any]) -> dict[str, Any]:
    return dict(data, schema=8, splats=[{"task": "", "place": "", **s} for s in data.get("splats", [])])


def schema_8_to_9(data: dict[str, Any]) -> dict[str, Any]:
    return dict(data, schema=9, splats=[{"printk_s": None, **s} for s in data.get("splats", [])])


def schema_9_to_10(data: dict[str, Any]) -> dict[str, Any]:
    return dict(data, schema=10)


def schema_10_to_11(data: dict[str, Any]) -> dict[str, Any]:
    return dict(data, schema=11)


def schema_11_to_12(data: dict[str, Any]) -> dict[str, Any]:
    return dict(data, schema=12)


def upgrade(data: dict[str, Any], console_log: Path) -> dict[str, Any]:
    """The data at the current schema; older ones step by step. ValueError for a schema not known."""
    if data.get("schema") == 2:
        data = schema_2_to_3(data, console_log)
    if data.get("schema") == 3:
        data = schema_3_to_4(data)
    if data.get("schema") == 4:
        data = schema_4_to_5(data)
    if data.get("schema") == 5:
        data = schema_5_to_6(data, console_log)
    if data.get("schema") == 6:
        data = schema_6_to_7(data)
    if data.get("schema") == 7:
        data = schema_7_to_8(data)
    if data.get("schema") == 8:
        data = schema_8_to_9(data)
    if data.get("schema") == 9:
        data = schema_9_to_10(data)
    if data.get("schema") == 10:
        data = schema_10_to_11(data)
    if data.get("schema") == 11:
        data = schema_11_to_12(data)
    return data


def upgrade_qa(data: Any) -> Any:
    """qa.json at the current schema: before schema 1 it was the bare list of lines."""
    return {"schema": 1, "lines": data} if isinstance(data, list) else data
