"""Each concept is stated once (issue 32): these tests fail when a second statement appears.

- A round is one object: code outside `proctor.rules` never tests a round's name (no
  `startswith("v5")`, no `== "3.1.0"`, no "6.1.0" default); it asks the round (`round_table(name)`,
  the training `rulesets` module) for its layout, audits, seeds and tables.
- An audit is one record (`audits/specs.py` SPECS): running, verifying, checking, truncating and the
  command line read it; no audit's name is branched on, listed or keyed elsewhere (its audit.config
  in `audits/configs.py` and each round's lists in `proctor.rules` aside).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

SRC = Path(__file__).resolve().parents[1] / "src" / "proctor"
RULES = SRC / "rules"
# A round's name: "v6.1", "6.1", "6.1.0" (inference rounds, training rulesets).
ROUND_NAME = re.compile(r"v?[1-9]\.\d(\.\d+)?")
# String constants shaped like a round name that are something else: (file, value) -> what it is.
NOT_A_ROUND = {
    ("version.py", "0.1.0"): "proctor's own version",
    ("loadgen/engine.py", "6.0.17"): "the official LoadGen release proctor's engine follows",
}


def _sources() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(SRC.rglob("*.py")):
        if RULES in path.parents:
            continue
        yield path.relative_to(SRC).as_posix(), ast.parse(path.read_text(encoding="utf-8"), str(path))


def _is_docstring(parent: ast.AST | None, node: ast.AST) -> bool:
    body = getattr(parent, "body", None)
    return isinstance(body, list) and bool(body) and isinstance(body[0], ast.Expr) and body[0].value is node


def test_no_round_name_is_tested_outside_rules() -> None:
    """`name.startswith("v5")` (or `("v4", "v5")`) on a round: the round's own field says it."""
    found = []
    for rel, tree in _sources():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr not in ("startswith", "endswith") or not node.args:
                continue
            arg = node.args[0]
            values = arg.elts if isinstance(arg, ast.Tuple) else [arg]
            names = [v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
            if any(re.fullmatch(r"v\d+(\.\d+)?", n) for n in names):
                found.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    assert found == []


def test_no_round_literal_outside_rules() -> None:
    """A round's name as a string constant (a default "6.1.0", a `== "3.1.0"` branch) outside
    `proctor.rules`: use CURRENT_ROUND / CURRENT_RULESET, or a field of the round."""
    found = []
    for rel, tree in _sources():
        parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            expr = parents.get(node)
            if isinstance(expr, ast.Expr) and _is_docstring(parents.get(expr), node):
                continue
            if ROUND_NAME.fullmatch(node.value) and (rel, node.value) not in NOT_A_ROUND:
                found.append(f"{rel}:{node.lineno}: {node.value!r}")
    assert found == []


def test_the_literal_check_finds_one(tmp_path: Path) -> None:
    """The pattern the check above uses matches what it is meant to catch."""
    assert ROUND_NAME.fullmatch("6.1.0") and ROUND_NAME.fullmatch("v5.1") and ROUND_NAME.fullmatch("5.1")
    assert not ROUND_NAME.fullmatch("TEST01") and not ROUND_NAME.fullmatch("v6.1 checker")
    assert not ROUND_NAME.fullmatch("99.9")  # an accuracy level


def test_every_round_states_its_layout_seeds_and_audits() -> None:
    """Each round carries what differs by round; the layout follows the official checker (v6.0 moved
    the audits and measurements into the result's folder and code/ to src/)."""
    from proctor.rules.inference_rounds import round_table
    from proctor.rules.rounds import ROUNDS, SEEDS, Layout

    for name in ROUNDS:
        rnd = round_table(name)
        assert rnd.name == name
        assert rnd.seeds == SEEDS[name]
        assert rnd.audits, name  # every round's checker requires some audits
        want = Layout.COMPLIANCE if name in ("v4.1", "v5.0", "v5.1") else Layout.RESULTS
        assert rnd.layout is want, name
    assert Layout.COMPLIANCE.code_folder == "code" and Layout.RESULTS.code_folder == "src"
    root = Path("sub")
    assert Layout.RESULTS.audit_dir(root, "s", "b", "Offline", "TEST01") == root / "results/s/b/Offline/TEST01"
    assert Layout.COMPLIANCE.audit_dir(root, "s", "b", "Offline", "TEST01") == root / "compliance/s/b/Offline/TEST01"
    assert Layout.COMPLIANCE.measurements_dir(root, "s", "b", "Offline") == root / "measurements/s/b/Offline"
    assert Layout.COMPLIANCE.measurements_name("s") == "s.json"


def test_the_current_round_audits_are_the_rounds() -> None:
    """`proctor audit all` and the checker read the current round's lists: no copy elsewhere."""
    from proctor.audits import configs, specs
    from proctor.rules.inference_rounds import AUDITS_V61, round_table

    assert round_table().audits is AUDITS_V61
    assert not hasattr(configs, "REQUIRED_AUDITS") and not hasattr(specs, "REQUIRED_AUDITS")


def _click_options() -> Iterator[tuple[str, Any]]:
    from proctor.cli.apps import app
    from proctor.cli.main import _register

    _register()

    def walk(cmd: Any, path: str) -> Iterator[tuple[str, Any]]:
        for p in cmd.params:
            if p.param_type_name == "option":
                yield path, p
        for name, sub in (getattr(cmd, "commands", None) or {}).items():
            yield from walk(sub, f"{path} {name}")

    yield from walk(typer.main.get_command(app), "proctor")


@pytest.mark.parametrize(("flag", "name"), [("--round", "round_"), ("--ruleset", "ruleset")])
def test_one_name_for_the_round_option(flag: str, name: str) -> None:
    """`--round` is `round_` in every command (it was `version` in some), `--ruleset` is `ruleset`."""
    seen = [(path, o.name) for path, o in _click_options() if flag in o.opts]
    assert len(seen) >= 3
    assert [s for s in seen if s[1] != name] == []


# The files an audit's name may appear in as a value: its record, its audit.config, the rounds' lists.
AUDIT_HOMES = ("audits/specs.py", "audits/configs.py")
AUDIT_NAME = re.compile(r"TEST\d\d")


def _audit_mentions(rel: str, tree: ast.Module) -> list[str]:
    found = []
    parents = {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and AUDIT_NAME.fullmatch(node.attr):
            found.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and AUDIT_NAME.fullmatch(node.value):
            expr = parents.get(node)
            if not (isinstance(expr, ast.Expr) and _is_docstring(parents.get(expr), node)):
                found.append(f"{rel}:{node.lineno}: {node.value!r}")
    return found


def test_no_audit_is_named_outside_its_record() -> None:
    """`if test == "TEST01"`, `audit is Audit.TEST06`, `HASH_TESTS = ("TEST01", ...)`, a `Which` enum
    copying `Audit`: each states an audit a second time. Code reads the audit's record instead."""
    found = [m for rel, tree in _sources() if rel not in AUDIT_HOMES for m in _audit_mentions(rel, tree)]
    assert found == []


def test_the_audit_check_finds_a_branch() -> None:
    """The scan above catches the shapes it is meant to (an if-chain on a name, an enum member)."""
    code = 'if test == "TEST01":\n    pass\nelif audit is Audit.TEST04:\n    pass\nX = ("TEST07", "TEST09")\n'
    assert len(_audit_mentions("x.py", ast.parse(code))) == 4
    assert _audit_mentions("x.py", ast.parse('"""TEST01 in a docstring."""\n')) == []


def test_every_audit_has_one_whole_record() -> None:
    """Each audit a round names has its record; a record proctor runs has its settings, its
    verification and the files it leaves, and the checker reads the verify files it writes."""
    from proctor.audits.specs import PLACES, RUNNABLE, SPECS, Audit
    from proctor.rules.inference_rounds import round_table
    from proctor.rules.rounds import ROUNDS

    assert set(SPECS) == set(Audit) and all(spec.audit is a for a, spec in SPECS.items())
    named = {t for r in ROUNDS for tests in round_table(r).audits.values() for t in tests}
    assert named <= set(Audit), named - set(Audit)
    assert tuple(a for a in Audit if SPECS[a].config is not None) == RUNNABLE
    for audit in RUNNABLE:
        spec = SPECS[audit]
        assert spec.comparisons and spec.keeps, audit
        assert tuple(c.kind for c in spec.comparisons) == spec.verify_files, audit
        assert all(c.log in PLACES for c in spec.comparisons) and all(k in PLACES for k in spec.keeps), audit
        assert spec.config is not None and spec.config("resnet50").audit == audit


def test_the_audit_argument_is_the_records(tmp_path: Path) -> None:
    """`proctor audit AUDIT` takes exactly the audits proctor runs (and `all`), from the records."""
    from typer.testing import CliRunner

    from proctor.audits.specs import RUNNABLE, Audit
    from proctor.cli.apps import app
    from proctor.cli.main import _register

    _register()
    runner = CliRunner()
    page = runner.invoke(app, ["audit", "--help"], terminal_width=200).output
    assert all(a in page for a in RUNNABLE)
    for name in [a for a in Audit if a not in RUNNABLE] + ["TEST99", "test01"]:
        res = runner.invoke(app, ["audit", name, "--sut", "digits", "-s", "Offline", "-o", str(tmp_path / "o")])
        assert res.exit_code == 2, (name, res.output)
        assert f"AUDIT '{name}' is not an audit proctor runs; use one of {', '.join(RUNNABLE)}" in res.output
    assert not (tmp_path / "o").exists()
