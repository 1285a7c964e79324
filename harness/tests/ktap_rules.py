"""The rules of Documentation/dev-tools/ktap.rst that sigwake's KTAP output must
keep, checked line by line: a version line first, a plan before any result,
results numbered 1..N as planned, subtests indented by four spaces with their own
version and plan and followed by their result line, only the known directives,
and (sigwake's own rule) unique names at each level. Returns the problems found."""

from __future__ import annotations

import re

RESULT = re.compile(r"^(ok|not ok) (\d+)(?: ([^#]*?))?\s*(?:# (\S+)(?: (.*))?)?$")
DIRECTIVES = {"SKIP", "TODO", "XFAIL", "TIMEOUT", "ERROR"}


def check(lines: list[str]) -> list[str]:
    problems: list[str] = []
    own = lines
    if not own or own[0] != "KTAP version 1":
        return ["the first line is not 'KTAP version 1'"]
    plan = None
    numbers, names = [], []
    sub: list[str] = []
    for line in own[1:]:
        if line.startswith("    "):
            sub.append(line)
            continue
        if line.startswith("#"):
            continue
        if re.fullmatch(r"1\.\.\d+", line):
            if plan is not None or numbers:
                problems.append(f"a plan after the plan or after results: {line}")
            plan = int(line[3:])
            continue
        match = RESULT.match(line)
        if match is None:
            problems.append(f"neither a result, a plan nor a diagnostic: {line!r}")
            continue
        if plan is None:
            problems.append(f"a result before the plan: {line}")
        if match[4] is not None and match[4] not in DIRECTIVES:
            problems.append(f"unknown directive {match[4]}: {line}")
        numbers.append(int(match[2]))
        names.append(match[3] or "")
        if sub:  # the subtest this result line closes
            problems += [f"in {match[3]}: {p}" for p in check([s[4:] for s in sub])]
            sub = []
    if sub:
        problems.append("a subtest with no result line after it")
    if numbers != list(range(1, len(numbers) + 1)):
        problems.append(f"results numbered {numbers}, not 1..{len(numbers)}")
    if plan is not None and plan != len(numbers):
        problems.append(f"planned {plan}, reported {len(numbers)}")
    if len(set(names)) != len(names):
        problems.append(f"names repeat: {sorted(n for n in names if names.count(n) > 1)}")
    return problems
