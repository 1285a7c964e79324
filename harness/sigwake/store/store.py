"""Where results are kept: results/<kernel-id>.json (written atomically), with the
raw console log beside it, and beside them the other commands' records
(qa.json, validations/, bisections/, mutants/score.json). Every record is
checked against its JSON Schema (schema.py) when written and when read, an
older version upgraded first (upgrade.py). Reading a folder names every file it
cannot read and goes on with the others."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable
from typing import Any, TypeVar

from ..core import schema
from ..core.atomic import atomic_write
from ..core.model import KernelResult, QaLine
from ..core.outcomes import BisectionRecord, ValidationRecord
from ..core.typed_json import from_data, to_data
from .upgrade import upgrade, upgrade_qa

T = TypeVar("T")

QA_FILE = "qa.json"  # `sigwake qa`'s lines; not a result file (load_results skips it)
VALIDATIONS = "validations"  # one record per validate-patch run
BISECTIONS = "bisections"  # one record per bisect run


def write_checked(path: Path, kind: str, data: dict[str, Any]) -> Path:
    """`data` written atomically once it fits its kind's schema (ValueError, and nothing written, if not)."""
    schema.check(kind, data)
    path.parent.mkdir(parents=True, exist_ok=True)
    return atomic_write(path, json.dumps(data, indent=2) + "\n")


def console_log_path(results_dir: Path, kernel_id: str) -> Path:
    return results_dir / f"{kernel_id}.console.log"


def write_result(results_dir: Path, result: KernelResult) -> Path:
    return write_checked(results_dir / f"{result.kernel_id}.json", "kernel-result", to_data(result))


@dataclass
class Loaded:
    results: list[KernelResult] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)  # "<file>: why"


def load_result(path: Path) -> KernelResult:
    """One result file (an older schema upgraded); ValueError, KeyError or TypeError when it is none sigwake
    reads, OSError when it cannot be read at all."""
    data = json.loads(path.read_text())
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    data = upgrade(data, console_log_path(path.parent, str(data.get("kernel_id"))))
    schema.check("kernel-result", data)
    return from_data(KernelResult, data)


class NoResults(OSError):
    """The results folder does not exist, or is not a folder."""


def load_results(results_dir: Path) -> Loaded:
    """Every result file of a folder; each one that cannot be read is named. NoResults when there is no folder."""
    if not results_dir.is_dir():
        raise NoResults(f"{results_dir}: no such results folder" if not results_dir.exists() else
                        f"{results_dir}: not a folder")
    loaded = Loaded()
    paths = sorted(p for p in results_dir.glob("*.json") if p.name != QA_FILE)
    loaded.results = _read_each(paths, load_result, "sigwake result file", loaded.unreadable)
    return loaded


def _read_each(paths: list[Path], read: Callable[[Path], T], what: str, unreadable: list[str]) -> list[T]:
    """Each file read; one that cannot be is named in `unreadable` (why), and the others are still read."""
    found = []
    for path in paths:
        try:
            found.append(read(path))
        except (ValueError, KeyError, TypeError) as e:
            unreadable.append(f"{path}: not a {what} of this version ({e})")
        except OSError as e:
            unreadable.append(f"{path}: cannot be read ({e.strerror or e})")
    return found


def write_qa(results_dir: Path, lines: list[QaLine]) -> Path:
    return write_checked(results_dir / QA_FILE, "qa", {"schema": schema.CURRENT["qa"], "lines": to_data(lines)})


def load_qa(results_dir: Path) -> list[QaLine]:
    """The last `sigwake qa`'s lines; none when it never ran here. ValueError when the file is unreadable."""
    path = results_dir / QA_FILE
    if not path.exists():
        return []
    try:
        data = upgrade_qa(json.loads(path.read_text()))
        schema.check("qa", data)
        return [from_data(QaLine, line) for line in data["lines"]]
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{path}: not a sigwake QA file of this version ({e})") from e


def write_validation(results_dir: Path, record: ValidationRecord) -> Path:
    return write_checked(results_dir / VALIDATIONS / f"{record.name}.json", "validation", to_data(record))


def write_bisection(results_dir: Path, record: BisectionRecord,
                    booted: list[tuple[KernelResult, Path]] | None = None) -> Path:
    """The record, and beside it in bisections/<its name>/ each kernel its steps booted: its result and console
    log, as a run keeps them (the reports show them with the bisection, never in the matrix)."""
    folder = bisection_kernels(results_dir, record)
    for result, console in booted or []:
        write_result(folder, result)
        if console.exists():
            shutil.copyfile(console, console_log_path(folder, result.kernel_id))
    return write_checked(results_dir / BISECTIONS / f"{record.name}.json", "bisection", to_data(record))


def bisection_kernels(results_dir: Path, record: BisectionRecord) -> Path:
    return results_dir / BISECTIONS / record.name


def _records(folder: Path, kind: str, cls: type[T], unreadable: list[str]) -> list[T]:
    def read(path: Path) -> T:
        data = json.loads(path.read_text())
        schema.check(kind, data)
        return from_data(cls, data)
    paths = sorted(folder.glob("*.json")) if folder.is_dir() else []
    return _read_each(paths, read, f"sigwake {kind} record", unreadable)


def load_validations(results_dir: Path, unreadable: list[str]) -> list[ValidationRecord]:
    """Every stored validate-patch record, oldest first; an unreadable one is named in `unreadable`."""
    return _records(results_dir / VALIDATIONS, "validation", ValidationRecord, unreadable)


def load_bisections(results_dir: Path, unreadable: list[str]) -> list[BisectionRecord]:
    return _records(results_dir / BISECTIONS, "bisection", BisectionRecord, unreadable)
