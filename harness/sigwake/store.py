"""Where results are kept: results/<kernel-id>.json (written atomically), with the
raw console log beside it. Reading a directory names every file it cannot read
and goes on with the others."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .atomic import atomic_write
from .model import KernelResult, QaLine

QA_FILE = "qa.json"  # `sigwake qa`'s lines; not a result file (load_results skips it)


def console_log_path(results_dir: Path, kernel_id: str) -> Path:
    return results_dir / f"{kernel_id}.console.log"


def write_result(results_dir: Path, result: KernelResult) -> Path:
    results_dir.mkdir(parents=True, exist_ok=True)
    return atomic_write(results_dir / f"{result.kernel_id}.json", json.dumps(result.to_json(), indent=2) + "\n")


@dataclass
class Loaded:
    results: list[KernelResult] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)  # "<file>: why"


def load_result(path: Path) -> KernelResult:
    """One result file; ValueError, KeyError or TypeError when it is none of this version."""
    return KernelResult.from_json(json.loads(path.read_text()))


def load_results(results_dir: Path) -> Loaded:
    loaded = Loaded()
    for path in sorted(p for p in results_dir.glob("*.json") if p.name != QA_FILE):
        try:
            loaded.results.append(load_result(path))
        except (ValueError, KeyError, TypeError) as e:
            loaded.unreadable.append(f"{path}: not a sigwake result file of this version ({e})")
    return loaded


def write_qa(results_dir: Path, lines: list[QaLine]) -> Path:
    results_dir.mkdir(parents=True, exist_ok=True)
    return atomic_write(results_dir / QA_FILE, json.dumps([line.to_json() for line in lines], indent=2) + "\n")


def load_qa(results_dir: Path) -> list[QaLine]:
    """The last `sigwake qa`'s lines; none when it never ran here. ValueError when the file is unreadable."""
    path = results_dir / QA_FILE
    if not path.exists():
        return []
    try:
        return [QaLine.from_json(line) for line in json.loads(path.read_text())]
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{path}: not a sigwake QA file of this version ({e})") from e
