"""The training rulesets as data: `Config.derive`, and the derived tables pinned.

Each ruleset module writes a table the rules text changed as a derivation of the previous round's
(`derive(replace=..., drop=..., add=..., before=...)`). These tests pin what the derivations produce:
a hash of every table's canonical dump (tests/training/ruleset_dump.py; regenerate the file with
`--hashes` only for a change the rules text made) and explicit expectations for representative rules.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proctor.rules.training.types import Check, Config, KeyRule, Req

from .ruleset_dump import VERSIONS, own_configs, ruleset, table_hashes

HASHES = Path(__file__).parent / "data" / "ruleset_table_hashes.json"


def _names(c: Config) -> list[str]:
    return [k.name for k in c.keys]


# --- derive --------------------------------------------------------------------------------------
_BASE = Config(
    "closed_x",
    (KeyRule("a", Req.EXACTLY_ONE, source="§1"), KeyRule("b", source="§2"), KeyRule("c", source="§3")),
    source="table x",
)


def test_derive_replace_keeps_place_and_the_rest() -> None:
    b2 = KeyRule(
        "b", Req.OPTIONAL, checks=(Check("v['value'] > 0", lambda s, v, ll: v["value"] > 0),), source="§9"
    )
    d = _BASE.derive(replace=[b2])
    assert _names(d) == ["a", "b", "c"]
    assert d.keys[1] is b2 and d.keys[0] is _BASE.keys[0] and d.keys[2] is _BASE.keys[2]
    assert (d.name, d.source, d.begin, d.end) == (_BASE.name, _BASE.source, _BASE.begin, _BASE.end)
    assert _names(_BASE) == ["a", "b", "c"] and _BASE.keys[1].req is Req.NONE  # the base is untouched


def test_derive_drop_add_before_and_name() -> None:
    d = _BASE.derive(drop=["a"], add=[KeyRule("z"), KeyRule("y")], name="open_x")
    assert (_names(d), d.name) == (["b", "c", "z", "y"], "open_x")
    d = _BASE.derive(drop=["b"], add=[KeyRule("b", Req.AT_LEAST_ONE)], before="a")
    assert _names(d) == ["b", "a", "c"] and d.keys[0].req is Req.AT_LEAST_ONE


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"drop": ["q"]}, "cannot drop 'q'"),
        ({"replace": [KeyRule("q")]}, "cannot replace 'q'"),
        ({"add": [KeyRule("a")]}, "'a' is added twice"),
        ({"add": [KeyRule("q"), KeyRule("q")]}, "'q' is added twice"),
        ({"add": [KeyRule("q")], "before": "w"}, "cannot add before 'w'"),
        ({"drop": ["a"], "replace": [KeyRule("a")]}, "cannot replace 'a'"),
    ],
)
def test_derive_refuses_what_is_not_there(kwargs: dict, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        _BASE.derive(**kwargs)


# --- the rulesets --------------------------------------------------------------------------------
def test_every_table_matches_its_pinned_hash() -> None:
    assert table_hashes() == json.loads(HASHES.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("version", "tables", "rules"),
    [
        ("4.0.0", 21, 139),
        ("4.1.0", 15, 100),
        ("5.0.0", 15, 100),
        ("5.1.0", 19, 132),
        ("6.0.0", 17, 183),
        ("6.1.0", 17, 213),
    ],
)
def test_counts_and_every_rule_cites_the_rules_text(version: str, tables: int, rules: int) -> None:
    configs = own_configs(ruleset(version))
    assert (len(configs), sum(len(c.keys) for c in configs.values())) == (tables, rules)
    assert all(k.source.startswith("§") for c in configs.values() for k in c.keys)


def test_unchanged_tables_are_the_previous_objects() -> None:
    assert ruleset("4.1.0").configs["closed_bert"] is ruleset("4.0.0").configs["closed_bert"]
    assert ruleset("6.1.0").configs["open_flux1"] is ruleset("6.0.0").configs["open_flux1"]
    common = [ruleset(v).configs["common"] for v in VERSIONS]
    assert len({id(c.begin) for c in common}) == 1  # the state setup of 4.0.0, derived through


def test_common_differs_by_what_the_rules_changed() -> None:
    c = {v: ruleset(v).configs["common"].by_key() for v in VERSIONS}
    assert "submission_status" in c["4.0.0"] and "submission_status" not in c["4.1.0"]
    assert "submission_org" not in c["5.0.0"]
    assert _names(ruleset("5.1.0").configs["common"])[:3] == [
        "submission_org",
        "submission_platform",
        "submission_division",
    ]
    assert c["5.1.0"]["submission_org"].source.startswith("§12 Benchmark Results")
    assert c["5.1.0"]["epoch_start"] is c["5.0.0"]["epoch_start"] is not c["4.1.0"]["epoch_start"]
    lin60, lin61 = (
        c["6.0.0"]["lowest_numerical_precision_in_linear"],
        c["6.1.0"]["lowest_numerical_precision_in_linear"],
    )
    assert (lin60.req, lin61.req) == (Req.OPTIONAL, Req.EXACTLY_ONE)
    assert "mxfp6" in lin61.checks[0].expr and "mxfp6" not in lin60.checks[0].expr
    assert lin61.source.startswith("§5 Basics")
    assert _names(ruleset("6.1.0").configs["common"])[-1] == "config_filename"
    assert c["6.1.0"]["tensor_parallelism"].checks[0].expr == "is_integer(v['value']) and v['value'] >= 1"


def test_derived_checks_behave() -> None:
    lin = ruleset("6.1.0").configs["common"].by_key()["lowest_numerical_precision_in_attn"].checks[0]
    lin60 = ruleset("6.0.0").configs["common"].by_key()["lowest_numerical_precision_in_attn"].checks[0]
    assert lin.fn({}, {"value": "mxfp6"}, None) and not lin60.fn({}, {"value": "mxfp6"}, None)
    assert not lin.fn({}, {"value": "fp7"}, None)
    tp = ruleset("6.1.0").configs["common"].by_key()["tensor_parallelism"].checks[0]
    assert tp.fn({}, {"value": 1}, None) and not tp.fn({}, {"value": 0}, None)
    llama = ruleset("4.1.0").configs["closed_llama2_70b_lora"]
    assert _names(llama) == [
        "global_batch_size", "opt_base_learning_rate", "opt_learning_rate_training_steps", "opt_gradient_clip_norm",
        "opt_adamw_weight_decay", "gradient_accumulation_steps", "lora_alpha", "lora_rank", "eval_accuracy",
    ]  # fmt: skip
    assert _names(ruleset("5.1.0").configs["closed_llama31_405b"])[5:7] == [
        "opt_learning_rate_warmup_steps",
        "opt_learning_rate_decay_steps",
    ]


def test_sibling_derivations() -> None:
    """A renamed benchmark keeps its table; a new one reads as its sibling's with the changes."""
    r41, r50 = ruleset("4.1.0").configs, ruleset("5.0.0").configs
    assert (
        r50["closed_retinanet"].keys == r41["closed_ssd"].keys
        and r50["closed_retinanet"].name == "closed_retinanet"
    )
    assert r50["closed_rgat"].keys == r41["closed_gnn"].keys
    r51, r60 = ruleset("5.1.0").configs, ruleset("6.0.0").configs
    assert (
        "max_steps" in r51["closed_llama31_8b"].by_key()
        and "init_checkpoint_step" not in r51["closed_llama31_8b"].by_key()
    )
    target = r60["closed_gpt_oss_20b"].by_key()["eval_accuracy"].atleast_one
    assert (
        target is not None and target.fn({}, {"value": 3.3}, None) and not target.fn({}, {"value": 3.4}, None)
    )
    assert r60["closed_gpt_oss_20b"].keys[:-2] == r51["closed_llama31_8b"].keys[:-2]


def test_rulesets_import_no_yaml() -> None:
    """PyYAML is a developer extra: the installed package never imports it for the tables."""
    import subprocess
    import sys

    code = (
        "import sys; import proctor.training.harness, proctor.training.compliance as c\n"
        "[c.get_ruleset(v) for v in c.available_rulesets()]\n"
        "import proctor.rules.training.scoring, proctor.rules.training.package, proctor.rules.training.benchmarks\n"
        "print('yaml' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.official
def test_generate_tables_drafts_the_derivations(tmp_path: Path) -> None:
    """The developer tool, given the previous version, drafts 6.1.0 as the committed tables are."""
    pytest.importorskip("yaml")
    cc = pytest.importorskip("mlperf_logging.compliance_checker")
    import importlib.util

    from tools.generate_tables import generate

    from .ruleset_dump import dump_config

    text = generate("6.1.0", Path(cc.__file__).parent, "6.0.0")
    assert '_PREVIOUS["common"].derive(' not in text and "_PREVIOUS['common'].derive(" in text
    assert "_PREVIOUS['closed_llama31_8b'],  # unchanged since 6.0.0" in text
    draft = tmp_path / "draft_6_1_0.py"
    draft.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("draft_6_1_0", draft)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # the draft a developer would review and commit
    committed = own_configs(ruleset("6.1.0"))
    assert list(module.RULESET.configs) == list(committed)
    for name, table in module.RULESET.configs.items():
        assert dump_config(table) == dump_config(committed[name]), name


# --- the tables as they were written before the check constructors -------------------------------
_BEFORE = "7360e20"  # the last commit whose tables wrote every check as Check(text, lambda)
_MODULES = [f"ruleset_{v.replace('.', '_')}" for v in VERSIONS]


def _tables_before(tmp_path: Path) -> dict[str, Any]:
    """The ruleset modules of `_BEFORE`, imported from git under another package name."""
    import importlib
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    pkg = tmp_path / "rules_before"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    for m in _MODULES:
        out = subprocess.run(
            ["git", "-C", str(root), "show", f"{_BEFORE}:src/proctor/rules/training/{m}.py"],
            capture_output=True,
            text=True,
        )
        if out.returncode != 0:
            pytest.skip(f"git history without {_BEFORE}: {out.stderr.strip()[:80]}")
        text = out.stdout.replace(
            "from proctor.rules.training import ruleset_", "from rules_before import ruleset_"
        )
        (pkg / f"{m}.py").write_text(text, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        return {
            v: importlib.import_module(f"rules_before.{m}").RULESET
            for v, m in zip(VERSIONS, _MODULES, strict=True)
        }
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n == "rules_before" or n.startswith("rules_before.")]:
            del sys.modules[name]


def _outcome(fn: Any, s: Any, v: dict[str, Any]) -> tuple[str, str]:
    try:
        return ("value", repr(fn(s, v, None)))
    except Exception as e:  # the checker reports a check that raises as "cannot evaluate"
        return ("raises", type(e).__name__)


def _values(exprs: list[str]) -> list[Any]:
    """Every constant the tables name, each just beside it, and values of the wrong kinds."""
    import re

    nums: set[float] = {0.0, 1.0, -1.0, 0.5, 1e9}
    for e in exprs:
        nums |= {float(x.replace("_", "")) for x in re.findall(r"(?<![\w.])\d[\d_]*(?:\.\d+)?(?:e-?\d+)?", e)}
    strs = {x for e in exprs for x in re.findall(r"'([^']*)'", e)}
    out: list[Any] = []
    for x in sorted(nums):
        out += [x, x * (1 + 1e-12), x - 1e-9, x + 1e-9, x + 1]
        if x == int(x):
            out.append(int(x))
    return [*out, *sorted(strs), "", "x", None, True, [1]]


_METADATA: list[dict[str, Any]] = [
    {},
    {"epoch_num": 1},
    {"samples_count": 64},
    {"epoch_count": 2, "first_epoch_num": 0},
    {"first_epoch_num": 0},
    {"status": "success"},
]


def test_the_constructors_changed_no_rule(tmp_path: Path) -> None:
    """Every table equals the one before the constructors, rule by rule: the same texts, sources and
    actions (bytecode identical), and every check that changed form gives the same outcome as before
    on every constant the tables name, just beside it, and values of the wrong kinds."""
    from proctor.rules.training.types import State

    from .ruleset_dump import _end, _fn, dump_config

    before = _tables_before(tmp_path)
    checked = 0
    for v in VERSIONS:
        old, new = own_configs(before[v]), own_configs(ruleset(v))
        assert list(old) == list(new), v
        exprs = [c.expr for t in old.values() for k in t.keys for c in (*k.checks, *k.first_check)]
        exprs += [k.atleast_one.expr for t in old.values() for k in t.keys if k.atleast_one]
        values = _values(exprs)
        for name in old:
            o, n = old[name], new[name]
            # the dump writes a function by its name; open_gpt3 now shares closed_gpt3's action
            want = json.dumps(dump_config(o)).replace(
                "_open_gpt3_global_batch_size_post", "_closed_gpt3_global_batch_size_post"
            )
            assert json.dumps(dump_config(n)) == want, (v, name)
            for ko, kn in zip(o.keys, n.keys, strict=True):
                assert _fn(ko.pre, True) == _fn(kn.pre, True) and _fn(ko.post, True) == _fn(kn.post, True)
                pairs = [
                    *zip(ko.checks, kn.checks, strict=True),
                    *zip(ko.first_check, kn.first_check, strict=True),
                ]
                if ko.atleast_one is not None and kn.atleast_one is not None:
                    pairs.append((ko.atleast_one, kn.atleast_one))
                for co, cn in pairs:
                    if _fn(co.fn, True) == _fn(cn.fn, True):
                        continue  # the same code, as written before
                    s = State(lambda _: None, frozenset({"digits_train"}))
                    for value in [*values, "digits_train"]:
                        for md in _METADATA:
                            line = {"value": value, "metadata": md}
                            assert _outcome(co.fn, s, line) == _outcome(cn.fn, s, line), (
                                v,
                                name,
                                co.expr,
                                value,
                                md,
                            )
                    checked += 1
            assert _fn(o.begin, True) == _fn(n.begin, True), (v, name)
            assert json.dumps(_end(o.end, True)) == json.dumps(_end(n.end, True)), (v, name)
    assert checked >= 300  # the constructors' checks, per table they stand in
