"""Every stored record's JSON Schema, kept as data in schemas/<kind>.v<version>.json (as kcidb-io keeps its
I/O schema): the store checks each record it writes and, once upgraded to the current version, each it reads.
A record of a kind's older version is brought up by the kind's upgrade step (upgrade.py) before the check."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema

from .model import SCHEMA

FOLDER = Path(__file__).parent / "schemas"

# The version each kind is written at.
CURRENT = {"kernel-result": SCHEMA, "qa": 1, "mutant-score": 3, "validation": 3, "bisection": 2, "case-facts": 5, "history-score": 2}


@functools.cache
def schema_of(kind: str, version: int) -> dict[str, Any]:
    path = FOLDER / f"{kind}.v{version}.json"
    if not path.exists():
        raise ValueError(f"no schema {version} of a {kind} record is known (sigwake writes schema {CURRENT[kind]})")
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


@functools.cache
def _all() -> dict[str, Any]:
    """Every schema by its $id, for the references between them (a validation's cases are result cases)."""
    loaded = (json.loads(path.read_text()) for path in sorted(FOLDER.glob("*.json")))
    return {schema["$id"]: schema for schema in loaded}


def check(kind: str, data: Any) -> None:
    """ValueError naming where `data` breaks its kind's schema (of the version it says it is)."""
    version = data.get("schema") if isinstance(data, dict) else None
    if not isinstance(version, int):
        raise ValueError(f"not a {kind} record: no schema version")
    schema = schema_of(kind, version)
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker(),
                                                resolver=jsonschema.RefResolver.from_schema(schema, store=_all()))
    problems = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if problems:
        first = problems[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(top)"
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ValueError(f"breaks {kind} schema {version} at {where}: {first.message}{more}")
