"""Reading a LAVA job log (lava-run prints one YAML flow mapping per line; the
server serves the same records as a YAML list, "- {...}"): the device's console
as one text for the framed-console parser, and LAVA's own word on the job. It
only parses."""

from __future__ import annotations

import yaml
from dataclasses import dataclass

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
CONSOLE_LEVELS = ("target", "feedback")  # what the device printed (feedback: after the monitor stopped)


@dataclass(frozen=True)
class LavaLog:
    console: str
    result: str  # LAVA's result of the job ("pass" or "fail"); "" when the log ends before it
    error: str  # LAVA's error type and message when the job failed
    unreadable: int  # lines that were no log record (a torn line)


def unescape(line: str) -> str:
    """LAVA's ShellLogger writes every '"' of the console as '\\"' (and drops CR and ESC); each '"' it
    logs follows the backslash it added, so this gives the line back exactly."""
    return line.replace('\\"', '"')


def parse_log(text: str) -> LavaLog:
    console: list[str] = []
    result, error, unreadable = "", "", 0
    for line in text.splitlines():
        line = line.strip().removeprefix("- ")
        if not line:
            continue
        try:
            record = yaml.load(line, Loader=LOADER)  # one line at a time: a torn line costs only itself
        except yaml.YAMLError:
            unreadable += 1
            continue
        if not isinstance(record, dict):
            unreadable += 1
            continue
        message = record.get("msg")
        if record.get("lvl") in CONSOLE_LEVELS and isinstance(message, str):
            console.append(unescape(message))
        elif record.get("lvl") == "results" and isinstance(message, dict) and message.get("case") == "job":
            result = str(message.get("result", ""))
            if "error_msg" in message:
                error = f"{message.get('error_type', 'Unknown')} error: {str(message['error_msg']).strip()}"
    return LavaLog("\n".join(console) + ("\n" if console else ""), result, error, unreadable)
