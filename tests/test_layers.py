"""The Python package's imports run one way: no module of ``python/cellfabric`` imports, directly
or through others, a module that imports it back.

Every import counts, at the top of a file or inside a function (a lazy import still ties two
modules together; it only hides the ring from the interpreter), except those under
``if TYPE_CHECKING:``, which never run. ``cellfabric._core`` (the Rust extension) imports
nothing of the package. The Rust crate's floors are checked by ``crates/core/tests/layers.rs``.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "cellfabric"
SOURCE = Path(__file__).resolve().parent.parent / "python" / PACKAGE


def _module_name(path: Path) -> str:
    return PACKAGE if path.name == "__init__.py" else f"{PACKAGE}.{path.stem}"


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imported(module: str, tree: ast.AST, modules: set[str]) -> set[str]:
    """The package's modules that ``module`` (parsed as ``tree``) imports."""
    found: set[str] = set()
    package = module if module == PACKAGE else module.rsplit(".", 1)[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking_only(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from . import x, from .x import y
                base = f"{package}.{base}".rstrip(".")
            if base in modules and base != PACKAGE:
                found.add(base)
            else:  # from cellfabric import x: the package, or its module x
                for alias in node.names:
                    name = f"{base}.{alias.name}"
                    found.add(name if name in modules else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(module)
    return {m for m in found if m in modules}


def import_graph(sources: dict[str, str]) -> dict[str, set[str]]:
    """Who imports whom among ``sources`` (module name to its code)."""
    modules = set(sources)
    return {name: _imported(name, ast.parse(code), modules) for name, code in sources.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import each other in a ring (the strongly connected groups of
    more than one module), each as one ring through them: ``[a, b, ..., a]``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return [_ring(graph, group) for group in sorted(groups)]


def _ring(graph: dict[str, set[str]], group: list[str]) -> list[str]:
    """The shortest ring from the group's first module back to it, within the group."""
    start = group[0]
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if w in group and w not in came_from:
                    came_from[w] = v
                    following.append(w)
        frontier = following
    raise AssertionError(f"no ring through {group}")


def _package_sources() -> dict[str, str]:
    return {_module_name(path): path.read_text() for path in sorted(SOURCE.glob("*.py"))}


def test_the_package_has_no_import_cycle():
    sources = _package_sources()
    assert len(sources) > 10, sorted(sources)
    found = cycles(import_graph(sources))
    assert not found, "import cycles: " + "; ".join(" -> ".join(ring) for ring in found)


def test_the_check_reports_a_cycle_and_ignores_type_checking_imports():
    graph = import_graph({
        "cellfabric": "from cellfabric.sweeps import sweep\n",
        "cellfabric.sweeps": "def execute():\n    from cellfabric.backends import run_locally\n",
        "cellfabric.backends": (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    import cellfabric\n"
            "def run_locally():\n    from . import sweeps\n"
        ),
        "cellfabric.runner": "import json\nfrom cellfabric._core import Simulation\n",
    })
    assert graph == {
        "cellfabric": {"cellfabric.sweeps"},
        "cellfabric.sweeps": {"cellfabric.backends"},
        "cellfabric.backends": {"cellfabric.sweeps"},
        "cellfabric.runner": set(),
    }
    assert cycles(graph) == [["cellfabric.backends", "cellfabric.sweeps", "cellfabric.backends"]]
