"""The layout is the architecture: no import cycle between packages or files, lazy imports included.

Every `import` in `src/proctor` counts, wherever it stands (module top, inside a function, under
`TYPE_CHECKING`): a lazy import hides a cycle from the interpreter, not from the design.
`from pkg import name` is an edge to `pkg.name` when that is a module, else to `pkg`.

Each rule docs/architecture.md states (the layer order, each "never", each "one home") is a case
here that quotes its sentence; a few places that predate a rule are listed by name beside it (an
open issue removes them), so any other place fails.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
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


# docs/architecture.md, "Layers": the picture, bottom to top. "Each package imports only from the
# layers below it": an edge from a layer to a higher one fails `test_no_import_reaches_up`; packages
# of one layer may import each other unless a rule below says "never".
LAYERS: tuple[tuple[str, ...], ...] = (
    # "shared leaves"
    ("errors", "findings", "mllog_lines", "text_files", "entry_points", "version", "trees", "column_files",
     "untrusted_text", "schemas", "tables", "submission_files", "typed_records", "lazy_patterns", "json_text"),
    ("wire",),  # "KServe V2 names and codecs, compression: what both sides of a connection import"
    ("rules", "benchmarks"),  # "the rules as data"; `proctor.benchmarks` re-exports rules/inference.py
    ("loadgen",),  # "the engine: no benchmark names, no SUT, client, server or CLI"
    ("resultsdb", "audits", "submission", "checks", "report", "training", "workloads", "serving", "suts",
     "clients", "compat"),
    ("app",),
    ("cli", "__main__", ""),  # "" is the `proctor` facade: it re-exports, nothing inside imports it
)
RANK = {f"{ROOT}.{name}" if name else ROOT: rank for rank, names in enumerate(LAYERS) for name in names}


def _layer_block() -> str:
    doc = (SRC.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = doc.split("## Layers", 1)[1]
    return section.split("```", 2)[1]


def test_the_layer_table_is_the_documented_picture() -> None:
    """Every package and top-level module of src/proctor has a layer here, and every one is drawn in
    the picture of docs/architecture.md: a new room is placed in both, or this fails."""
    unplaced = sorted({package_of(m) for m in _modules()} - set(RANK))
    assert unplaced == [], "place these in LAYERS and in the picture of docs/architecture.md"
    block = _layer_block()
    undrawn = sorted(
        name for names in LAYERS for name in names if name and f"{name}/" not in block and f"{name}.py" not in block
    )
    assert undrawn == [], "draw these in the picture of docs/architecture.md"


def upward_edges(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{m} -> {t}" for m, targets in graph.items() for t in targets if RANK[package_of(t)] > RANK[package_of(m)]
    )


def test_no_import_reaches_up() -> None:
    """"Each package imports only from the layers below it" (docs/architecture.md, "Layers")."""
    assert upward_edges(import_graph()) == []


def test_the_rank_check_can_fail() -> None:
    """The ranks are read the right way round: a leaf importing the CLI, loadgen a SUT, the rules the
    engine or the wire the rules is up; the CLI importing a leaf, or a sibling a sibling, is not."""
    graph = {
        "proctor.errors": {"proctor.cli.output"},
        "proctor.loadgen.engine": {"proctor.suts.registry", "proctor.rules.inference"},
        "proctor.rules.rounds": {"proctor.loadgen.settings"},
        "proctor.wire.kserve_v2": {"proctor.rules.inference"},
        "proctor.cli.run": {"proctor.errors", "proctor.app.session"},
        "proctor.clients.network": {"proctor.suts.registry"},
    }
    assert upward_edges(graph) == [
        "proctor.errors -> proctor.cli.output",
        "proctor.loadgen.engine -> proctor.suts.registry",
        "proctor.rules.rounds -> proctor.loadgen.settings",
        "proctor.wire.kserve_v2 -> proctor.rules.inference",
    ]


_MIDDLE = LAYERS[4]


@pytest.mark.parametrize(
    ("layer", "forbidden"),
    [
        # "loadgen/  the engine: no benchmark names, no SUT, client, server or CLI"
        ("proctor.loadgen", ("proctor.cli", "proctor.app", "proctor.suts", "proctor.clients", "proctor.serving",
                             "proctor.workloads", "proctor.checks", "proctor.training", "proctor.compat")),
        # "`clients/` never imports a workload or a server"
        ("proctor.clients", ("proctor.workloads", "proctor.serving", "proctor.cli", "proctor.app")),
        # "`serving/` never imports a client"
        ("proctor.serving", ("proctor.clients", "proctor.cli", "proctor.app")),
        # "wire/ ... what both sides of a connection import"
        ("proctor.wire", ("proctor.clients", "proctor.serving", "proctor.loadgen")),
        ("proctor.app", ("proctor.cli",)),
        # "`checks/` and `training/` never import the CLI or the app"; "The entry point is the only link
        # from `training/` to a workload"; "in submission/, which imports training/, never the other way"
        ("proctor.training", ("proctor.cli", "proctor.app", "proctor.workloads", "proctor.resultsdb",
                              "proctor.submission")),
        # "`checks/` and `submission/` never import each other (the checker reads trees, the packager builds them)"
        ("proctor.checks", ("proctor.cli", "proctor.app", "proctor.resultsdb", "proctor.submission")),
        ("proctor.submission", ("proctor.checks",)),
        # "`audits/` imports neither" (of checks/ and submission/); "`report/` none of the three"
        ("proctor.audits", ("proctor.checks", "proctor.submission")),
        ("proctor.report", ("proctor.cli", "proctor.app", "proctor.resultsdb", "proctor.checks", "proctor.submission",
                            "proctor.audits")),
        # "resultsdb/ (published results ...: reads trees with checks/ and training/)": only the CLI
        # and the app read it
        *[(pkg, ("proctor.resultsdb",)) for pkg in (f"{ROOT}.{name}" for name in _MIDDLE) if pkg != "proctor.resultsdb"],
        # "SUTs register themselves ... proctor's own SUTs and a user's installed package register the
        # same way": the registry finds them by entry point and imports no SUT's package
        ("proctor.suts", ("proctor.workloads", "proctor.clients", "proctor.serving")),
        # the one home of tree safety is a shared leaf: every reader and writer of a tree may use it
        ("proctor.trees", ("proctor.cli", "proctor.app", "proctor.checks", "proctor.submission", "proctor.audits",
                           "proctor.training", "proctor.report", "proctor.loadgen", "proctor.rules",
                           "proctor.resultsdb")),
    ],
)
def test_layers(layer: str, forbidden: tuple[str, ...]) -> None:
    """Lower layers never reach up and siblings never reach where the doc says never."""
    graph = import_graph()
    bad = sorted(
        f"{m} -> {t}"
        for m, targets in graph.items()
        if package_of(m) == layer
        for t in targets
        if package_of(t) in forbidden
    )
    assert bad == []


# --- the other "never"s of docs/architecture.md, each a scan of src/proctor that fails when broken ---
@functools.cache
def _trees() -> dict[str, ast.Module]:
    return {m: ast.parse(p.read_text(encoding="utf-8"), str(p)) for m, p in _modules().items()}


def _in(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _called(node: ast.AST) -> str:
    """`f(...)` -> "f", `a.b.f(...)` -> "f"; "" for anything else."""
    return _call_name(node) if isinstance(node, ast.Call) else ""


def evals(tree: ast.Module) -> list[str]:
    """Calls of the builtins that run text as code."""
    return [
        f"line {n.lineno}: {n.func.id}"
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("eval", "exec", "compile")
    ]


def test_nothing_runs_text_as_code() -> None:
    """"A rule is written once: ... (closures, never `eval`)" (docs/architecture.md, "Training"); the
    project's standard: never exec/eval anything read from input. No eval, exec or compile anywhere."""
    found = [f"{m} {line}" for m, tree in _trees().items() for line in evals(tree)]
    assert found == []


def entry_point_reads(tree: ast.Module) -> list[str]:
    """Where a module reads installed entry points itself (`importlib.metadata.entry_points`)."""
    found = [f"line {n.lineno}: calls entry_points" for n in ast.walk(tree) if _called(n) == "entry_points"]
    found += [
        f"line {n.lineno}: imports entry_points"
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module == "importlib.metadata"
        and any(a.name == "entry_points" for a in n.names)
    ]
    return found


def test_entry_points_are_read_in_one_place() -> None:
    """"names from the `proctor.suts` entry points, read by `entry_points.py`" (docs/architecture.md,
    "SUTs register themselves"); the training registry reads its group the same way."""
    found = [f"{m} {line}" for m, tree in _trees().items() if m != "proctor.entry_points" for line in entry_point_reads(tree)]
    assert found == []


def _names_a_sut(node: ast.expr) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name == "sut" or name.endswith("_sut") or name.startswith("sut_")


def sut_probes(tree: ast.Module) -> set[str]:
    """The attributes probed on a SUT with getattr/hasattr (`getattr(sut, "x", None)` -> "x")."""
    return {
        n.args[1].value if isinstance(n.args[1], ast.Constant) else ast.unparse(n.args[1])
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("getattr", "hasattr")
        and len(n.args) >= 2 and _names_a_sut(n.args[0])
    }


def test_no_sut_is_probed_with_getattr() -> None:
    """"everything else is an optional capability declared as a Protocol and checked by type, never
    probed with `getattr`" (docs/architecture.md, the SUT seam)."""
    found = {(m, attr) for m, tree in _trees().items() for attr in sut_probes(tree)}
    assert sorted(found) == []  # issue 32 item 3 removed the last ones (suts/spec.py, Protocols in loadgen/types.py)


def _docstrings(tree: ast.Module) -> set[int]:
    return {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)
    }


def engine_words(tree: ast.Module, benchmarks: set[str]) -> set[str]:
    """String constants (docstrings aside) that name a benchmark or a command-line option."""
    docs = _docstrings(tree)
    alternatives = "|".join(re.escape(b) for b in sorted(benchmarks, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w-])({alternatives})(?!\w)")
    found: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            found.update(pattern.findall(n.value))
            found.update(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]+", n.value))
    return found


def test_the_engine_names_no_benchmark_and_no_option() -> None:
    """"loadgen/  the engine: no benchmark names, no SUT, client, server or CLI" (docs/architecture.md,
    "Layers"; the imports are `test_layers`): no string of loadgen/ names a benchmark of the inference
    table or a command-line option. The engine's advice names an option through the caller's labels
    (EngineOptions.labels, loadgen/option_names.py; issue 32 item 5 emptied the list of exceptions)."""
    from proctor.rules.inference import BY_NAME

    found = {
        m: sorted(words)
        for m, tree in _trees().items()
        if _in(m, "proctor.loadgen") and (words := engine_words(tree, set(BY_NAME)))
    }
    assert found == {}


COMPLETION_FUNCTIONS = {"query_samples_complete", "first_token_complete"}


def test_the_completion_functions_are_only_the_official_apis_forwarding() -> None:
    """"The module-level completion functions (`query_samples_complete`, ...) are only the forwarding
    layer the official API needs: ... `compat/` harnesses call them" (docs/architecture.md): outside
    loadgen/ (which defines them), compat/ and the facade's re-export, no code names them."""
    found = sorted(
        f"{m} line {n.lineno}"
        for m, tree in _trees().items()
        if not _in(m, "proctor.loadgen", "proctor.compat") and m != ROOT
        for n in ast.walk(tree)
        if (isinstance(n, ast.Name) and n.id in COMPLETION_FUNCTIONS)
        or (isinstance(n, ast.Attribute) and n.attr in COMPLETION_FUNCTIONS)
        or (isinstance(n, ast.alias) and n.name in COMPLETION_FUNCTIONS)
    )
    assert found == []


EXTRAS = ("pyarrow", "duckdb")  # optional dependencies: the `results` extra, Parquet


def eager_imports(tree: ast.Module, names: tuple[str, ...]) -> list[str]:
    """Imports of `names` that run when the module is imported (module body, not under TYPE_CHECKING)."""
    found: list[str] = []
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.If | ast.Try | ast.With):
            stack.extend(ast.iter_child_nodes(node))  # type: ignore[arg-type]
            continue
        mods = (
            [a.name for a in node.names] if isinstance(node, ast.Import)
            else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
            else []
        )
        for n in ast.walk(node) if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else []:
            if _called(n) == "import_module" and isinstance(n, ast.Call) and n.args and isinstance(n.args[0], ast.Constant):
                mods.append(str(n.args[0].value))
        found += [f"line {node.lineno}: {m}" for m in mods if m.split(".")[0] in names]
    return found


def test_optional_extras_are_imported_on_first_use() -> None:
    """"pyarrow imported only for Parquet" (`column_files.py`); the database is "the `results` extra;
    imported on first use" (docs/architecture.md): no module imports pyarrow or DuckDB when it is
    itself imported, and only `resultsdb/store.py` imports DuckDB."""
    trees = _trees()
    eager = [f"{m} {line}" for m, tree in trees.items() for line in eager_imports(tree, EXTRAS)]
    assert eager == []
    duckdb = sorted(
        m for m, tree in trees.items()
        if m != "proctor.resultsdb.store"
        and any(
            (isinstance(n, ast.Import) and any(a.name.split(".")[0] == "duckdb" for a in n.names))
            or (isinstance(n, ast.ImportFrom) and (n.module or "").split(".")[0] == "duckdb" and not n.level)
            or (_called(n) == "import_module" and isinstance(n, ast.Call) and n.args
                and isinstance(n.args[0], ast.Constant) and str(n.args[0].value).startswith("duckdb"))
            for n in ast.walk(tree)
        )
    )
    assert duckdb == []


def text_mode_reads(tree: ast.Module) -> list[str]:
    """Files opened or read as text (`path.read_text()`, `open` without a "b" mode)."""
    found: list[str] = []
    for n in ast.walk(tree):
        name = _called(n)
        if not isinstance(n, ast.Call) or name not in ("open", "read_text"):
            continue
        if name == "read_text":  # a path's method; text_files.read_text is the one reader
            if isinstance(n.func, ast.Attribute) and ast.unparse(n.func.value) != "text_files":
                found.append(f"line {n.lineno}: {ast.unparse(n)}")
            continue
        args = n.args[1:] if isinstance(n.func, ast.Name) else n.args
        mode = next((k.value for k in n.keywords if k.arg == "mode"), args[0] if args else None)
        if not (isinstance(mode, ast.Constant) and isinstance(mode.value, str) and "b" in mode.value):
            found.append(f"line {n.lineno}: {ast.unparse(n)}")
    return found


def test_the_checkers_read_text_through_text_files() -> None:
    """"`checks/` ... every text file read through `text_files.py` (UTF-8 and universal newlines, as the
    official Python tools read them)" (docs/architecture.md, the folder table): no module of checks/
    opens a file in text mode or calls read_text itself."""
    found = [f"{m} {line}" for m, tree in _trees().items() if _in(m, "proctor.checks") for line in text_mode_reads(tree)]
    assert found == []


TREE_CALLS = {("os", "walk"), ("shutil", "copy"), ("shutil", "copy2"), ("shutil", "copyfile"),
              ("shutil", "copytree"), ("shutil", "move")}


def tree_calls(tree: ast.Module) -> set[str]:
    """Walks and copies done with os/shutil directly (`os.walk`, `shutil.copyfile`, ...)."""
    return {
        n.func.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
        and (n.func.value.id, n.func.attr) in TREE_CALLS
    }


# Walks and copies of a tree someone else made that do not go through trees.py yet (bounded by depth
# and count, resp. checked before the copy, but not the trees.py way); any other fails now.
KNOWN_TREE_CALLS = {("proctor.report.collect", "walk"), ("proctor.submission.training_package", "copyfile")}


def test_trees_are_walked_and_copied_through_trees_py() -> None:
    """"`trees.py` is the one home of tree safety: every command that walks, reads, copies or writes a
    tree someone else made ... goes through it" (docs/architecture.md): no os.walk or shutil copy
    elsewhere."""
    found = {(m, call) for m, tree in _trees().items() if m != "proctor.trees" for call in tree_calls(tree)}
    assert sorted(found - KNOWN_TREE_CALLS) == []


RUN_CALLS = {"run_test", "run_official"}
# issue 32 item 4: a sweep's points run through the session too (app/sweep.py calls no engine).
KNOWN_RUN_OWNERS: set[str] = set()


def test_one_owner_per_run() -> None:
    """"app/  session.py (one owner per run)" (docs/architecture.md, "Layers"; "A run, from the command
    line to the verdict": the CLI, the demo, find-peak and the audits run through the session): outside
    the engines (loadgen/, compat/), the session and the facade, no module calls run_test or
    run_official."""
    found = sorted(
        m
        for m, tree in _trees().items()
        if not _in(m, "proctor.loadgen", "proctor.compat") and m not in (ROOT, "proctor.app.session")
        and any(_called(n) in RUN_CALLS for n in ast.walk(tree))
    )
    assert sorted(set(found) - KNOWN_RUN_OWNERS) == []


# issue 32 item 5 moved the engine's live line to the CLI (cli/live_progress.py, through cli/output.py).
KNOWN_CONSOLES: set[str] = set()


def test_the_consoles_are_the_clis() -> None:
    """"`cli/output.py` holds the consoles" (docs/architecture.md, "Command line and the public API"):
    no other module makes a rich Console."""
    found = sorted(
        m
        for m, tree in _trees().items()
        if m != "proctor.cli.output" and any(_called(n) == "Console" for n in ast.walk(tree))
    )
    assert sorted(set(found) - KNOWN_CONSOLES) == []


def _base_names(node: ast.ClassDef) -> list[str]:
    return [b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "" for b in node.bases]


def error_classes_outside_the_tree(trees: dict[str, ast.Module]) -> list[str]:
    """Public exception classes that do not descend from errors.py's ProctorError (by base names; an
    interrupt, a KeyboardInterrupt, is not an error)."""
    classes = {(m, n.name): _base_names(n) for m, t in trees.items() for n in ast.walk(t) if isinstance(n, ast.ClassDef)}
    bases_by_name: dict[str, list[str]] = defaultdict(list)
    for (_, name), bases in classes.items():
        bases_by_name[name] += bases

    def ancestors(name: str) -> set[str]:
        found, todo = {name}, [name]
        while todo:
            for b in bases_by_name.get(todo.pop(), []):
                if b not in found:
                    found.add(b)
                    todo.append(b)
        return found

    builtin_errors = {n for n in dir(builtins) if isinstance(getattr(builtins, n), type)
                      and issubclass(getattr(builtins, n), Exception)}
    return sorted(
        f"{m}.{name}"
        for (m, name), _ in classes.items()
        if not name.startswith("_") and (a := ancestors(name)) & builtin_errors and "ProctorError" not in a
    )


# clients/tally.py's EndpointDown is a ConnectionError the engine's fault classification reads.
KNOWN_ERRORS_OUTSIDE = {"proctor.clients.tally.EndpointDown"}


def test_every_error_is_in_the_tree_errors_py_draws() -> None:
    """"Every error class is in the tree `errors.py` draws" (docs/architecture.md): a public exception
    class descends from `ProctorError`."""
    assert sorted(set(error_classes_outside_the_tree(_trees())) - KNOWN_ERRORS_OUTSIDE) == []


HOSTILE_MODULE = '''
"""A docstring may say resnet50 and --model: it is not a string the code uses."""
import pyarrow
import os, shutil
from importlib.metadata import entry_points
if TYPE_CHECKING:
    import duckdb

MODEL = "bert"
HINT = "raise --duration-ms"
try:
    pq = importlib.import_module("pyarrow.parquet")
except ImportError:
    pq = None

def f(sut, path, other):
    hasattr(sut, "close"); getattr(other, "x", None); getattr(self.sut, "report", None)
    eval("1"); exec("x = 1")
    os.walk(path); shutil.copyfile(path, other)
    path.read_text(); open(path); open(path, "rb"); path.open("r"); path.open(mode="rb")
    text_files.read_text(path)
    import duckdb  # on first use: fine
    return entry_points(group="proctor.suts")

class BadError(ValueError): pass
class Worse(BadError): pass
class Fine(RunError): pass
class _Private(Exception): pass
class Stop(KeyboardInterrupt): pass
'''


def test_the_scanners_find_each_kind_of_break() -> None:
    """The scans above can fail: each break in HOSTILE_MODULE is found, what is allowed is not."""
    tree = ast.parse(HOSTILE_MODULE)
    assert [line.split(": ")[1] for line in evals(tree)] == ["eval", "exec"]
    assert len(entry_point_reads(tree)) == 2
    assert sut_probes(tree) == {"close", "report"}
    assert engine_words(tree, {"bert", "resnet50"}) == {"bert", "--duration-ms"}
    assert sorted(line.split(": ")[1] for line in eager_imports(tree, EXTRAS)) == ["pyarrow", "pyarrow.parquet"]
    assert [line.split(": ")[1] for line in text_mode_reads(tree)] == ["path.read_text()", "open(path)", "path.open('r')"]
    assert tree_calls(tree) == {"walk", "copyfile"}
    errors_tree = ast.parse("class ProctorError(Exception): pass\nclass RunError(ProctorError): pass")
    found = error_classes_outside_the_tree({"proctor.x": tree, "proctor.errors": errors_tree})
    assert found == ["proctor.x.BadError", "proctor.x.Worse"]


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
