"""Where results are kept: results/<kernel-id>.json (written atomically), with the
raw console log beside it. Reading a directory names every file it cannot read
and goes on with the others."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .atomic import atomic_write
from .model import KernelResult, QaLine
from .upgrade import upgrade

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
    """One result file (an older schema upgraded); ValueError, KeyError or TypeError when it is none sigwake
    reads, OSError when it cannot be read at all."""
    data = json.loads(path.read_text())
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return KernelResult.from_json(upgrade(data, console_log_path(path.parent, str(data.get("kernel_id")))))


class NoResults(OSError):
    """The results folder does not exist, or is not a folder."""


def load_results(results_dir: Path) -> Loaded:
    """Every result file of a folder; each one that cannot be read is named. NoResults when there is no folder."""
    if not results_dir.is_dir():
        raise NoResults(f"{results_dir}: no such results folder" if not results_dir.exists() else
                        f"{results_dir}: not a folder")
    loaded = Loaded()
    for path in sorted(p for p in results_dir.glob("*.json") if p.name != QA_FILE):
        try:
            loaded.results.append(load_result(path))
        except (ValueError, KeyError, TypeError) as e:
            loaded.unreadable.append(f"{path}: not a sigwake result file of this version ({e})")
        except OSError as e:
            loaded.unreadable.append(f"{path}: cannot be read ({e.strerror or e})")
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
