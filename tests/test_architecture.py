"""The layout is the architecture: no import cycle between packages or files, lazy imports included.

Every `import` in `src/proctor` counts, wherever it stands (module top, inside a function, under
`TYPE_CHECKING`): a lazy import hides a cycle from the interpreter, not from the design.
`from pkg import name` is an edge to `pkg.name` when that is a module, else to `pkg`.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = "proctor"


def _modules() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for path in sorted((SRC / ROOT).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = module.split(".")
        if not is_package:
            base.pop()
        base = base[: len(base) - (node.level - 1)]
        name = ".".join([*base, *([node.module] if node.module else [])])
    else:
        name = node.module or ""
    return [name, *(f"{name}.{alias.name}" for alias in node.names)]


def import_graph() -> dict[str, set[str]]:
    """module -> the proctor modules it imports (the longest module name each import resolves to)."""
    mods = _modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in mods.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            names = _targets(module, is_package, node)
            if isinstance(node, ast.ImportFrom):
                submodules = [n for n in names[1:] if n in mods]
                names = submodules if len(submodules) == len(names) - 1 else names
            for name in names:
                if name != ROOT and not name.startswith(ROOT + "."):
                    continue
                while name and name not in mods:
                    name = name.rpartition(".")[0]
                if name and name != module:
                    graph[module].add(name)
    return graph


def package_of(module: str) -> str:
    """`proctor.loadgen.logs.detail` -> `proctor.loadgen`; a top-level module is its own node."""
    return ".".join(module.split(".")[:2])


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for a, targets in graph.items():
        for b in targets:
            if package_of(a) != package_of(b):
                out[package_of(a)].add(package_of(b))
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    nodes = sorted(set(graph) | {b for bs in graph.values() for b in bs})
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def _describe(components: list[list[str]], graph: dict[str, set[str]]) -> str:
    lines = []
    for component in components:
        members = set(component)
        lines += [f"{a} -> {sorted(graph[a] & members)}" for a in component]
    return "\n".join(lines)


def test_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_graph_sees_lazy_imports() -> None:
    """A function-level import is an edge: the CLI's commands import their libraries lazily."""
    graph = import_graph()
    assert any(target.startswith("proctor.loadgen") for target in graph["proctor.cli.run"])


def test_no_cycle_between_files() -> None:
    graph = import_graph()
    found = cycles(graph)
    assert not found, "import cycles between files:\n" + _describe(found, graph)


def test_no_cycle_between_packages() -> None:
    graph = package_graph(import_graph())
    found = cycles(graph)
    assert not found, "import cycles between packages:\n" + _describe(found, graph)


def test_nothing_imports_the_facade() -> None:
    """`proctor/__init__.py` re-exports the public API; inside the package, import the defining module."""
    graph = import_graph()
    users = sorted(m for m, targets in graph.items() if ROOT in targets)
    assert users == []


@pytest.mark.parametrize(
    ("layer", "forbidden"),
    [
        ("proctor.loadgen", ("proctor.cli", "proctor.app", "proctor.suts", "proctor.clients", "proctor.serving",
                             "proctor.workloads", "proctor.checks", "proctor.training", "proctor.compat")),
        ("proctor.clients", ("proctor.workloads", "proctor.serving", "proctor.cli", "proctor.app")),
        ("proctor.serving", ("proctor.clients", "proctor.cli", "proctor.app")),
        ("proctor.wire", ("proctor.clients", "proctor.serving", "proctor.loadgen")),
        ("proctor.app", ("proctor.cli",)),
        ("proctor.training", ("proctor.cli", "proctor.app", "proctor.workloads", "proctor.resultsdb")),
        ("proctor.checks", ("proctor.cli", "proctor.app", "proctor.resultsdb")),
        # the results database reads published trees with the checkers; nothing below it reads it
        ("proctor.resultsdb", ("proctor.cli", "proctor.app")),
        ("proctor.report", ("proctor.cli", "proctor.app", "proctor.resultsdb")),
        # the one home of tree safety is a shared leaf: every reader and writer of a tree may use it
        ("proctor.trees", ("proctor.cli", "proctor.app", "proctor.checks", "proctor.submission", "proctor.audits",
                           "proctor.training", "proctor.report", "proctor.loadgen", "proctor.rules",
                           "proctor.resultsdb")),
    ],
)
def test_layers(layer: str, forbidden: tuple[str, ...]) -> None:
    """Lower layers never reach up: the network client imports no workload or server."""
    graph = import_graph()
    bad = sorted(
        f"{m} -> {t}"
        for m, targets in graph.items()
        if package_of(m) == layer
        for t in targets
        if package_of(t) in forbidden
    )
    assert bad == []


def test_no_test_tooling_in_the_package() -> None:
    """Synthetic logs, stand-in submissions and tiny third-party models live in tests/support."""
    names = {p.stem for p in (SRC / ROOT).rglob("*.py")}
    assert not names & {"synthetic_logs", "standin", "hf_tiny", "gguf_tiny", "generate_tables"}
