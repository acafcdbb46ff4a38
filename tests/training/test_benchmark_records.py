"""One record per training benchmark: the "one home" test (rules/training/benchmarks.py).

A benchmark's facts (its round, N, olympic drop, convergence unit, RCP list name, cadence, rules-text
tables, special cases) are stated in its `TrainingBenchmark` record and read from it; no module on
the training side keys a table by an official benchmark's name or compares a name with one. The
only other place the names stand is the official checker's compliance tables (`ruleset_*.py`, the
official YAML table for table, pinned by hash in test_rulesets.py). An extension benchmark
(digits_train) is a record of the same type.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import proctor
from proctor.errors import ConfigError
from proctor.rules.training.benchmarks import (
    OFFICIAL,
    ROUNDS,
    TrainingBenchmark,
    allowed_benchmarks,
    declared_official_facts,
    official,
    rules_text_table,
)
from proctor.training.benchmarks import resolve
from proctor.training.compliance import available_rulesets, get_ruleset

SRC = Path(proctor.__file__).parent
HOME = "rules/training/benchmarks.py"
# the official checker's tables: config names and the list of submission_benchmark values are its YAML's
OFFICIAL_TABLES = re.compile(r"rules/training/ruleset_\d+_\d+_\d+\.py")
TRAINING_DIRS = ("training/", "rules/training/", "rules/training_rcps/", "workloads/digits_train/")
TRAINING_MODULES = ("proctor.training", "proctor.rules.training", "proctor.rules.training_rcps")


def _docstrings(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _imports_training(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        names = (
            [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else []
        )
        if any(n == m or n.startswith(f"{m}.") for n in names for m in TRAINING_MODULES):
            return True
    return False


def name_literals(source: str, names: Iterable[str]) -> Iterator[tuple[int, str]]:
    """(line, name) of every string constant in code (not a docstring) that is a benchmark's name."""
    tree = ast.parse(source)
    wanted, docs = set(names), _docstrings(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value in wanted
            and id(node) not in docs
        ):
            yield node.lineno, node.value


def training_side(rel: str, source: str) -> bool:
    return rel.startswith(TRAINING_DIRS) or _imports_training(ast.parse(source))


def test_no_official_benchmark_name_outside_its_record() -> None:
    """The one-home test: a name-keyed table or a name comparison outside the record module fails."""
    offenders, scanned = [], 0
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        text = path.read_text(encoding="utf-8")
        if rel == HOME or OFFICIAL_TABLES.fullmatch(rel) or not training_side(rel, text):
            continue
        scanned += 1
        offenders += [f"{rel}:{line}: {name!r}" for line, name in name_literals(text, OFFICIAL)]
    assert scanned >= 30  # the training package, the rules, the CLI, resultsdb, submission, app
    assert offenders == [], "state a benchmark's facts in its record (rules/training/benchmarks.py)"


def test_the_scan_finds_a_fact_stated_twice(tmp_path: Path) -> None:
    source = (
        '"""A module that mentions bert in its docstring."""\n'
        "from proctor.rules.training import scoring\n"
        'RUNS = {"bert": 10, "unet3d": 40}\n'
        "def unit(bench):\n"
        '    """resnet is fine here."""\n'
        '    return "samples" if bench == "llama31_405b" else "epochs"\n'
    )
    assert training_side("cli/x.py", source) and not training_side("cli/x.py", "import os\n")
    assert list(name_literals(source, OFFICIAL)) == [(3, "bert"), (3, "unet3d"), (6, "llama31_405b")]


def test_every_fact_of_an_official_record_is_cited() -> None:
    fields = set(TrainingBenchmark.__dataclass_fields__)
    for name, rec in OFFICIAL.items():
        assert rec.name == name and rec.tables == {} and rec.rcps is None  # the ruleset's, the shipped
        assert set(rec.cite) <= fields, name
        assert rec.cite["runs_required"].startswith(("002 §", "not in the 002")), name
        own_source = {"early_convergence", "rules_text"}  # the objects cite themselves
        assert {f for f in declared_official_facts(rec) if f not in own_source} <= set(rec.cite), name
        if rec.cadence is not None:
            assert rec.cadence.source.startswith("§9 Training Loop: evaluation frequency table"), name
        if rec.early_convergence is not None:
            assert rec.early_convergence.source.startswith("002 §"), name
        for ruleset, table in rec.rules_text.items():
            assert ruleset in available_rulesets() and table.name == f"closed_{name}", (name, ruleset)
            assert all(k.source.startswith("§9 Training Loop") for k in table.keys), (name, ruleset)


def test_rounds_list_records_and_every_table_benchmark_has_one() -> None:
    from proctor.resultsdb.layout import TRAINING_ROUNDS

    assert all(OFFICIAL[b.name] is b for round_ in ROUNDS.values() for b in round_)
    assert (
        TRAINING_ROUNDS == ("v4.0", "v4.1", "v5.0", "v5.1", "v6.0", "v6.1") == tuple(f"v{k}" for k in ROUNDS)
    )
    assert allowed_benchmarks("6.1.0") == allowed_benchmarks("6.1") == tuple(b.name for b in ROUNDS["6.1"])
    assert allowed_benchmarks("9.9.0") == ()
    for version in available_rulesets():  # every name the official checker's tables accept
        assert set(get_ruleset(version).benchmarks) <= set(OFFICIAL), version


def test_an_extension_is_the_same_record_and_may_not_set_official_facts() -> None:
    from proctor.workloads.digits_train.spec import training_benchmark

    digits = training_benchmark("6.1.0")
    assert isinstance(digits, TrainingBenchmark) and declared_official_facts(digits) == []
    assert (
        digits.target is not None and digits.cadence is not None and set(digits.tables) == {"closed", "open"}
    )
    assert resolve("6.1.0", [digits]) == {"digits_train": digits}
    bad = TrainingBenchmark("x_bench", {}, 3, olympic_drop=2, converges_in="samples")
    assert declared_official_facts(bad) == ["olympic_drop", "converges_in"]
    with pytest.raises(ConfigError, match="olympic_drop, converges_in are read from the official"):
        resolve("6.1.0", [bad])
    with pytest.raises(ConfigError, match="is an official benchmark"):
        resolve("6.1.0", [TrainingBenchmark("flux1", {}, 3)])


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=30)
    | st.sampled_from(sorted(OFFICIAL)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@pytest.mark.fuzz
@given(division=_JSON | st.sampled_from(["closed", "open"]), benchmark=_JSON, ruleset=st.text(max_size=8))
def test_a_log_s_values_look_a_record_up_without_raising(
    division: object, benchmark: object, ruleset: str
) -> None:
    """What a log declares (any JSON value) finds a record or nothing; an unhashable value never raises."""
    rec = official(benchmark)
    assert rec is (OFFICIAL[benchmark] if isinstance(benchmark, str) and benchmark in OFFICIAL else None)
    table = rules_text_table(ruleset, division, benchmark)
    assert table is (rec.rules_text.get(ruleset) if rec is not None and division == "closed" else None)
