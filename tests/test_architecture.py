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


# --- the application layer uses the APIs a user has -------------------------------------------------
SELF_NAMES = {"self", "cls"}
SUT_FACTORIES = {"build_sut", "from_params", "build"}  # what hands out a SUT (session, registry, workloads)


def _root_name(node: ast.expr) -> ast.expr:
    """`a.b[c].d` -> `a`: the object an attribute or item target belongs to."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node


def _has_attribute(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute | ast.Subscript):
        if isinstance(node, ast.Attribute):
            return True
        node = node.value
    return False


def _annotation_name(node: ast.expr | None) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.split("[")[0].strip()
    return node.id if isinstance(node, ast.Name) else ""


def _call_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        f = node.func
        return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
    return ""


def _bound_names(target: ast.expr) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [n for t in target.elts for n in _bound_names(t)]
    return []


def reaches_in(source: str, own_package: str, own_classes: set[str]) -> list[str]:
    """Where code of `own_package` reaches into another package's internals, one line per place:

    - a `_name` imported from another proctor package, or read off a proctor module or any object
      but `self`/`cls` (a non-proctor module's, such as `os._exit`, is that library's API);
    - an attribute set on an object that is not its own (`self`, or a name typed or built as one of
      `own_classes`): e.g. replacing a SUT's backend;
    - any attribute of a SUT (a name bound from `build_sut`/`from_params`/`build`): the SUT is handed
      to the run session whole, never driven or patched from outside (`sut.batcher.close()`).
    """
    tree = ast.parse(source)
    found: list[str] = []
    proctor_modules: set[str] = set()
    other_modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                (proctor_modules if alias.name.split(".")[0] == ROOT else other_modules).add(bound)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            own = node.module == own_package or node.module.startswith(own_package + ".")
            for alias in node.names:
                if alias.name.startswith("_") and node.module.startswith(ROOT) and not own:
                    found.append(f"line {node.lineno}: imports {node.module}.{alias.name}")

    def visit(scope: ast.AST, owned: set[str], suts: set[str]) -> None:
        owned, suts = set(owned), set(suts)
        if isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            args = scope.args
            for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                if a.arg in SELF_NAMES or _annotation_name(a.annotation) in own_classes:
                    owned.add(a.arg)
        body = list(ast.iter_child_nodes(scope))
        for node in _walk_scope(body):
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if node.value is not None and _call_name(node.value) in own_classes:
                        owned.update(_bound_names(t))
                    if node.value is not None and _call_name(node.value) in SUT_FACTORIES:
                        suts.update(_bound_names(t))
                if isinstance(node, ast.AnnAssign) and _annotation_name(node.annotation) in own_classes:
                    owned.update(_bound_names(node.target))
        for node in _walk_scope(body):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
                visit(node, owned, suts)
                continue
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            elif isinstance(node, ast.Delete):
                targets = node.targets
            for t in targets:
                for el in t.elts if isinstance(t, ast.Tuple | ast.List) else [t]:
                    if not _has_attribute(el):  # `local[i] = v` changes a container the code made
                        continue
                    root = _root_name(el)
                    if not (isinstance(root, ast.Name) and root.id in owned):
                        found.append(f"line {el.lineno}: sets {ast.unparse(el)} on an object it does not own")
            if _call_name(node) in ("setattr", "delattr") and isinstance(node, ast.Call):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                base = node.value.id
                if base in suts:
                    found.append(f"line {node.lineno}: reaches into the SUT: {ast.unparse(node)}")
                private = node.attr.startswith("_") and not node.attr.startswith("__")
                if private and base not in SELF_NAMES and (base in proctor_modules or base not in other_modules):
                    found.append(f"line {node.lineno}: reads {ast.unparse(node)}")

    visit(tree, set(), set())
    return found


def _walk_scope(nodes: list[ast.AST]) -> list[ast.AST]:
    """Every node under `nodes` that belongs to this scope; a nested function or class is returned,
    not entered (it is visited as its own scope)."""
    out: list[ast.AST] = []
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return out


HOSTILE_DEMO = '''
import os
import proctor.loadgen.engine as engine
from proctor.loadgen.resolve import _seconds
from proctor.workloads.digits.sut import from_params

class Mine:
    def __init__(self):
        self.x = 1

def run_one(stop, report: "Report"):
    sut, qsl = from_params(backend="numpy")
    sut.backend = Wrapper(sut.backend, stop)
    report.rows = []
    mine = Mine()
    mine.x = 2
    outcome = engine.run_test(sut, qsl)
    outcome.result.valid = True
    setattr(outcome, "valid", True)
    sut.batcher.close(timeout=0.5)
    engine._DRAIN = 0
    os._exit(0)
    return outcome._private, _seconds
'''


def test_the_reach_scanner_finds_each_kind_of_reach() -> None:
    """The scanner below can fail: each reach the old demo made (a SUT's backend replaced, its
    batcher closed) and each other kind is reported; what the code owns is not."""
    found = reaches_in(HOSTILE_DEMO, "proctor.app.demo", {"Mine", "Report"})
    text = "\n".join(found)
    assert "imports proctor.loadgen.resolve._seconds" in text
    assert "sets sut.backend on an object it does not own" in text
    assert "reaches into the SUT: sut.batcher" in text and "reaches into the SUT: sut.backend" in text
    assert "sets outcome.result.valid" in text and "setattr(outcome" in text
    assert "sets engine._DRAIN" in text and "reads engine._DRAIN" in text
    assert "reads outcome._private" in text
    assert not any(s in text for s in ("report.rows", "mine.x", "self.x", "os._exit"))


def test_the_demo_uses_only_the_apis_a_user_has() -> None:
    """`proctor demo` is built from the run session, the audits, the packagers and the checkers: no
    module of app/demo sets or reads another package's internals, nor touches a SUT beyond handing
    it to the session (issue 32: it replaced `sut.backend` and called `sut.batcher.close`)."""
    package = "proctor.app.demo"
    files = sorted((SRC / ROOT / "app" / "demo").glob("*.py"))
    assert files, "app/demo is a package"
    sources = {p: p.read_text(encoding="utf-8") for p in files}
    own_classes = {
        node.name for s in sources.values() for node in ast.walk(ast.parse(s)) if isinstance(node, ast.ClassDef)
    }
    found = [f"{p.name} {line}" for p, s in sources.items() for line in reaches_in(s, package, own_classes)]
    assert found == []
