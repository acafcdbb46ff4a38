"""A SUT spec has one home (suts/spec.py) and a SUT's capabilities are Protocols: these scans of the
source fail when the spec text is split, joined or compared with a SUT's name a second time, or when
a capability is probed by attribute name again (issue 32 §3)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from proctor.suts import registry

SRC = Path(__file__).resolve().parents[2] / "src" / "proctor"
HOME = SRC / "suts" / "spec.py"
TEXT_EDITS = {"split", "rsplit", "partition", "rpartition", "find", "index", "replace"}
PARSER_NAMES = {"parse_spec", "parse_pairs", "_split_spec", "with_param", "parse_sut_spec", "token_ids_for_test06"}
OLD_HELPERS = {"parse_spec", "parse_pairs", "_split_spec", "with_param"}  # text-editing helpers (SutSpec's are methods)
# where capabilities were probed with getattr (issue 32 §3): no attribute is looked up by name there
PROTOCOL_FILES = ("app/session.py", "loadgen/types.py", "serving/node_server.py", "clients/openai.py")


def _sources() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(), str(p))) for p in sorted(SRC.rglob("*.py"))]


def _ident(node: ast.expr) -> str:
    """The last identifier of a name or attribute chain (`opts.sut` -> "sut"), "" otherwise."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _is_sut_text(node: ast.expr, builds_suts: bool) -> bool:
    """A receiver that holds --sut text: one named for a SUT, or a `spec` in a module that builds SUTs
    (other modules' `spec`s are dataset lengths or fault lists)."""
    name = _ident(node).lower()
    return "sut" in name or (builds_suts and name in {"spec", "spec_text", "text"})


def _builds_suts(tree: ast.Module) -> bool:
    """The module imports the registry or the spec module (at any depth: lazy imports count)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module in {"proctor.suts.registry", "proctor.suts.spec"}:
                return True
            if node.module == "proctor.suts" and any(a.name in {"registry", "spec"} for a in node.names):
                return True
        if isinstance(node, ast.Import) and any(a.name.startswith(("proctor.suts.registry", "proctor.suts.spec"))
                                                for a in node.names):
            return True
    return False


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(SRC.parent)}:{getattr(node, 'lineno', 0)}"


def spec_text_edits(path: Path, tree: ast.Module) -> list[str]:
    """Places in one module that split, join or re-parse SUT spec text, or define a second parser."""
    found = []
    builds = _builds_suts(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in PARSER_NAMES:
            found.append(f"{_where(path, node)}: defines {node.name}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in OLD_HELPERS:
            found.append(f"{_where(path, node)}: {ast.unparse(node)[:80]}")  # a text helper, not the SutSpec's
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        method, receiver = node.func.attr, node.func.value
        if method in OLD_HELPERS and _ident(receiver) == "registry":
            found.append(f"{_where(path, node)}: {ast.unparse(node)[:80]}")
        if method in TEXT_EDITS and _is_sut_text(receiver, builds) and _holds_spec_separator(node):
            found.append(f"{_where(path, node)}: {ast.unparse(node)}")
        if method == "join" and isinstance(receiver, ast.Constant) and receiver.value == "," and any(
            _is_pair_text(arg) for arg in node.args
        ):
            found.append(f"{_where(path, node)}: builds k=v text: {ast.unparse(node)[:80]}")
    return found


def _holds_spec_separator(call: ast.Call) -> bool:
    return any(isinstance(a, ast.Constant) and a.value in (",", ":", "=") for a in call.args)


def _is_pair_text(arg: ast.expr) -> bool:
    """A generator of f"{k}={v}" items: SUT parameters written back as text."""
    if not isinstance(arg, ast.GeneratorExp | ast.ListComp) or not isinstance(arg.elt, ast.JoinedStr):
        return False
    parts = arg.elt.values
    return any(isinstance(p, ast.Constant) and str(p.value).startswith("=") for p in parts)


def sut_name_branches(path: Path, tree: ast.Module, names: set[str]) -> list[str]:
    """Comparisons of a spec's name or target with a registered SUT's name (`name != "openai"`)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        named = [s for s in sides if isinstance(s, ast.Constant) and s.value in names]
        other = [s for s in sides if _ident(s) in {"name", "target", "head", "sut", "spec", "kind_name"}]
        if named and other:
            found.append(f"{_where(path, node)}: {ast.unparse(node)}")
    return found


def literal_getattrs(path: Path, tree: ast.Module, everywhere: bool) -> list[str]:
    """`getattr(x, "name", ...)`: everywhere on a SUT (`sut`, `self.sut`), anywhere in the given files."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"getattr", "hasattr"}):
            continue
        if len(node.args) < 2 or not isinstance(node.args[1], ast.Constant):
            continue
        if everywhere or "sut" in _ident(node.args[0]).lower():
            found.append(f"{_where(path, node)}: {ast.unparse(node)}")
    return found


def test_the_scanners_find_each_kind_of_restatement() -> None:
    hostile = ast.parse(
        "from proctor.suts import registry\n"
        "def token_ids_for_test06(spec):\n"
        "    name, _, params = spec.partition(':')\n"
        "    keys = [kv.partition('=')[0] for kv in params.split(',')]\n"
        "    if name != 'openai': return spec\n"
        "    text = name + ':' + ','.join(f'{k}={v}' for k, v in pairs)\n"
        "    x = opts.sut.split(',')\n"
        "    y = registry.with_param(spec, 'k', 'v'), with_param(x, 'a', 'b'), parsed.with_param('a', 'b', '--a')\n"
        "    return getattr(sut, 'generation_override', ''), getattr(self.sut, 'qsl', None), getattr(q, 'n')\n"
    )
    where = SRC / "cli" / "x.py"
    edits = spec_text_edits(where, hostile)
    assert len(edits) == 6, edits  # the def, spec.partition, the join, opts.sut.split, both text with_params
    assert len(sut_name_branches(where, hostile, {"openai"})) == 1
    assert len(literal_getattrs(where, hostile, everywhere=False)) == 2
    assert len(literal_getattrs(where, hostile, everywhere=True)) == 3


def test_only_suts_spec_parses_or_writes_a_sut_spec() -> None:
    found = [hit for path, tree in _sources() if path != HOME for hit in spec_text_edits(path, tree)]
    assert found == []


def test_no_code_branches_on_a_registered_sut_name() -> None:
    names = set(registry.registered())
    assert {"openai", "synthetic", "digits", "network"} <= names
    found = [hit for path, tree in _sources() for hit in sut_name_branches(path, tree, names)]
    assert found == []


@pytest.mark.parametrize("where", PROTOCOL_FILES)
def test_capabilities_are_protocols_not_attribute_probes(where: str) -> None:
    path = SRC / where
    assert literal_getattrs(path, ast.parse(path.read_text()), everywhere=True) == []


def test_no_sut_is_probed_by_attribute_name() -> None:
    found = [hit for path, tree in _sources() for hit in literal_getattrs(path, tree, everywhere=False)]
    assert found == []
