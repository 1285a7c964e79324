"""The package is laid out in folders that show one run's path, bottom to top; a folder may import only
itself and the folders below it (docs/house.md: "What each folder may import"), there are no import circles, and
every module says in its first docstring line what it is."""

from __future__ import annotations

import ast
from pathlib import Path

import sigwake

# Bottom to top: each may import itself and those before it.
LAYERS = ("core", "parse", "kernels", "programs", "targets", "store", "judge", "reports", "commands")
PACKAGE = Path(sigwake.__file__).parent


def modules() -> dict[str, Path]:
    return {".".join(p.relative_to(PACKAGE).with_suffix("").parts): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported(name: str, path: Path) -> set[str]:
    """The sigwake modules (folder.module, or a folder) that `name` imports."""
    own = name.split(".")[:-1] if not name.endswith("__init__") else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = own[:len(own) - (node.level - 1)] + (node.module.split(".") if node.module else [])
            elif node.module and node.module.startswith("sigwake"):
                base = node.module.split(".")[1:]
            else:
                continue
            for alias in node.names:
                target = [*base, alias.name]
                found.add(".".join(target if ".".join(target) in modules() else base))
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".", 1)[1] for a in node.names if a.name.startswith("sigwake.")}
    return {f for f in found if f}


def test_every_module_lives_in_a_layer_and_says_what_it_is() -> None:
    for name, path in modules().items():
        if name == "__init__":
            continue
        assert name.split(".")[0] in LAYERS, f"{name}: not in a layer folder"
        doc = ast.get_docstring(ast.parse(path.read_text()))
        assert doc and doc.split("\n")[0].strip(), f"{name}: no docstring"


def test_no_folder_imports_one_above_it() -> None:
    wrong = []
    for name, path in modules().items():
        layer = name.split(".")[0]
        if layer not in LAYERS:
            continue
        for target in imported(name, path):
            if LAYERS.index(target.split(".")[0]) > LAYERS.index(layer):
                wrong.append(f"{name} imports {target}")
    assert not wrong, "\n".join(wrong)


def test_there_are_no_import_circles() -> None:
    graph = {name: imported(name, path) & set(modules()) for name, path in modules().items()}
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        if state.get(node) == 2:
            return
        assert state.get(node) != 1, "import circle: " + " -> ".join([*trail[trail.index(node):], node])
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            visit(nxt, [*trail, node])
        state[node] = 2

    for name in graph:
        visit(name, [])
