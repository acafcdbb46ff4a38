"""Developer tool: write a first draft of a ruleset table module from the official checker's YAML.

    python -m tools.generate_tables 6.1.0 6.0.0 > src/proctor/rules/training/ruleset_6_1_0.py

With a previous version, a table the official YAML keeps word for word is the previous ruleset's
object, and a table that changed only some rules is written as `Config.derive` of the previous one
(replace, drop, add), so the draft reads as the difference. PyYAML is a `dev` extra: it is imported
only when this tool runs.

The official rules are Python expressions inside YAML; this turns each into a function in a table
module (source code that is reviewed and committed), so proctor never executes text read from a
file at check time. Each rule gets the rules-text section it comes from (`_source`). Run by hand
when a new official ruleset appears, then review the diff; nothing imports this at run time.
"""

from __future__ import annotations

import re
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_DISCLOSURE = {
    "lowest_numerical_precision_in_linear",
    "lowest_numerical_precision_in_attn",
    "lowest_numerical_precision_in_comm",
    "tensor_parallelism",
    "pipeline_parallelism",
    "context_parallelism",
    "expert_parallelism",
    "micro_batch_size",
    "config_filename",
}


def _source(config: str, key: str) -> str:
    """The rules-text section (rules/002_*.txt) a key's rule comes from."""
    if key in ("init_start", "init_stop"):
        return "§11 Run Results: maximum model initialization time (30 min Closed, 4 h Open)"
    if key in ("run_start", "run_stop"):
        return "§11 Run Results: the clock starts before the dataset is touched and stops at the target"
    if key == "cache_clear":
        return "§6 Data Set: flush the cache or restart the system prior to benchmarking"
    if key in _DISCLOSURE:
        return "§5 Basics: v6.1 precision, parallelism and config disclosure (exactly once, allowed formats, positive integers)"
    if key == "submission_division":
        return "§4 Divisions"
    if key == "submission_benchmark":
        return "§3 Benchmarks"
    if key.startswith("submission_"):
        return "§12 Benchmark Results (submission identification; enforced by the official checker)"
    if key in ("eval_accuracy", "averaged_validation_loss"):
        if config.startswith("open_"):
            return "§9 Training Loop: OPEN stopping criteria; §3 Benchmarks quality targets"
        return "§3 Benchmarks: closed quality targets; §9 Training Loop: quality measure and evaluation frequency"
    if key in (
        "block_start",
        "block_stop",
        "epoch_start",
        "epoch_stop",
        "eval_start",
        "eval_stop",
        "train_samples",
        "eval_samples",
        "evaluation_frequency",
    ):
        return "§9 Training Loop: evaluation frequency and thoroughness"
    if config.startswith("open_"):
        return "§9 Training Loop: OPEN hyperparameters (as the official open table enforces)"
    return "§9 Training Loop: hyperparameter table (tunable hyperparameters and constraints)"


def _fix(code: str) -> str:
    code = re.sub(r"enqueue_config\('training_[0-9.]+/", "s.enqueue('", code)
    return code.replace(".yaml'", "'")


def _check(expr: str) -> str:
    expr = " ".join(expr.strip().split("\n"))
    return f"Check({expr!r}, lambda s, v, ll: {_fix(expr)})"


def _checks(value: object) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    return [_check(str(x)) for x in items]


def _func(name: str, code: str, args: str = "s, v, ll") -> str:
    body = textwrap.indent(_fix(textwrap.dedent(code).strip()), "    ")
    return f"def {name}({args}) -> None:\n{body}\n"


@dataclass
class _Table:
    name: str
    begin: str = "None"
    keys: list[tuple[str, str]] = field(default_factory=list)  # (key name, KeyRule source)
    funcs: dict[str, str] = field(default_factory=dict)  # function name -> source


@dataclass
class _Draft:
    tables: dict[str, _Table]
    skipped: list[str]
    closed_bench: list[str]


def _rule_text(table: _Table, text: str) -> str:
    """A rule with the bodies of the functions it calls, to compare two versions' rules by."""
    return text + "".join(body for fname, body in table.funcs.items() if re.search(rf"\b{fname}\b", text))


def _parse(version: str, root: Path) -> _Draft:
    import yaml  # dev extra; only this tool needs it

    folder = root / f"training_{version}"
    tables: dict[str, _Table] = {}
    closed_bench: list[str] = []
    skipped: list[str] = []
    for path in sorted(folder.glob("*.yaml")):
        name = path.stem
        items: list[dict[str, Any]] = yaml.load(path.read_text(), Loader=yaml.BaseLoader) or []
        if "loglines" in path.read_text():
            # rewrites the parsed log itself (stable_diffusion's aggregated evals): not expressible
            # as a table; such a log gets "no rules" from the engine
            skipped.append(name)
            continue
        table = tables[name] = _Table(name)
        ident = re.sub(r"\W", "_", name)
        for item in items:
            kind = next(iter(item))
            body = item[kind]
            if kind == "BEGIN":
                fname = f"_{ident}_begin"
                table.funcs[fname] = _func(fname, body["CODE"], "s")
                table.begin = fname
            elif kind == "KEY":
                key = body["NAME"]
                kid = f"_{ident}_{key}"
                req = body.get("REQ", "NONE").strip()
                args = [repr(key)]
                m = re.match(r"AT_LEAST_ONE_OR\((.*)\)", req)
                if m:
                    args.append("Req.AT_LEAST_ONE_OR")
                    alts = tuple(a.strip() for a in m.group(1).split(","))
                    args.append(f"alternatives={alts!r}")
                elif m := re.match(r"AT_LEAST\((\d+)\)", req):
                    args += ["Req.AT_LEAST", f"at_least={int(m.group(1))}"]
                else:
                    args.append(f"Req.{req}")
                checks = _checks(body.get("CHECK"))
                if key == "submission_benchmark":
                    found = re.search(r"in (\[.*\])", body["CHECK"])
                    if found is None:
                        raise SystemExit(f"{path}: submission_benchmark check names no list")
                    benches = yaml.safe_load(found.group(1))
                    if name == "closed_common":
                        closed_bench = benches
                    expr = body["CHECK"].strip()
                    checks = [
                        f"Check({expr!r}, lambda s, v, ll: v['value'] in {tuple(benches)!r} "
                        f"or v['value'] in s.benchmarks)"
                    ]
                if checks:
                    args.append("checks=(" + ", ".join(checks) + ",)")
                for part, arg in (("PRE", "pre"), ("POST", "post")):
                    if part in body:
                        table.funcs[f"{kid}_{arg}"] = _func(f"{kid}_{arg}", body[part])
                        args.append(f"{arg}={kid}_{arg}")
                if "FIRST_CHECK" in body:
                    args.append("first_check=(" + ", ".join(_checks(body["FIRST_CHECK"])) + ",)")
                if "ATLEAST_ONE_CHECK" in body:
                    args.append(f"atleast_one={_check(body['ATLEAST_ONE_CHECK'])}")
                args.append(f"source={_source(name, key)!r}")
                table.keys.append((key, f"KeyRule({', '.join(args)})"))
            else:
                raise SystemExit(f"{path}: unsupported block {kind}")
    return _Draft(tables, skipped, closed_bench)


def _derivation(prev: _Table, cur: _Table) -> str | None:
    """`derive(...)` arguments that turn `prev` into `cur`, or None when a whole table reads better."""
    if prev.begin != cur.begin or (prev.begin != "None" and prev.funcs[prev.begin] != cur.funcs[cur.begin]):
        return None
    pk, ck = [k for k, _ in prev.keys], [k for k, _ in cur.keys]
    if len(set(pk)) != len(pk) or len(set(ck)) != len(ck):
        return None
    old = {k: _rule_text(prev, t) for k, t in prev.keys}
    drop = [k for k in pk if k not in ck]
    add = [i for i, k in enumerate(ck) if k not in old]
    if [k for k in ck if k in old] != [k for k in pk if k not in drop]:
        return None  # reordered
    if add and add != list(range(add[0], add[0] + len(add))):
        return None  # added in more than one place
    replace = [(k, t) for k, t in cur.keys if k in old and _rule_text(cur, t) != old[k]]
    if len(replace) + len(add) > len(ck) // 2:
        return None
    parts = []
    if drop:
        parts.append("drop=(" + "".join(f"{k!r}, " for k in drop) + "),")
    if replace:
        parts.append("replace=(" + "".join(f"{t}, " for _, t in replace) + "),")
    if add:
        parts.append("add=(" + "".join(f"{cur.keys[i][1]}, " for i in add) + "),")
        if add[-1] + 1 < len(ck):
            parts.append(f"before={ck[add[-1] + 1]!r},")
    return " ".join(parts)


def generate(version: str, root: Path, previous: str | None = None) -> str:
    draft = _parse(version, root)
    before = _parse(previous, root) if previous else None
    configs: list[str] = []
    used: list[str] = []
    for name, table in draft.tables.items():
        prev = before.tables.get(name) if before else None
        if (
            prev is not None
            and [_rule_text(prev, t) for _, t in prev.keys] == [_rule_text(table, t) for _, t in table.keys]
            and (prev.begin == "None") == (table.begin == "None")
        ):
            configs.append(f"    _PREVIOUS[{name!r}],  # unchanged since {previous}")
            continue
        derived = _derivation(prev, table) if prev is not None else None
        if derived is not None:
            text = f"    _PREVIOUS[{name!r}].derive({derived}),"
        else:
            keys = "\n".join(f"        {t}," for _, t in table.keys)
            text = f"    Config(\n        {name!r},\n        (\n{keys}\n        ),\n        begin={table.begin},\n    ),"
        configs.append(text)
        used += [body for fname, body in table.funcs.items() if re.search(rf"\b{fname}\b", text)]
    previous_import = (
        f"from proctor.rules.training import ruleset_{previous.replace('.', '_')} as _previous\n"
        if previous
        else ""
    )
    previous_tables = (
        f"\n# Tables this ruleset keeps word for word from {previous}: the same objects.\n"
        "_PREVIOUS = _previous.RULESET.configs\n"
        if previous
        else ""
    )
    head = f'''"""Training compliance rules, ruleset {version}: every config of the official checker as a table.

Drafted by `generate_tables.py` from mlperf_logging 4.1.68 `training_{version}/*.yaml`, then
reviewed. Config names are the YAML names without `.yaml` ("common", "closed_<benchmark>", ...).
Where the rules text and the official checker differ, see docs/deviations.md (training section).
"""

# ruff: noqa: E501, E712, E731

from __future__ import annotations

{previous_import}from proctor.rules.training.types import Check, Config, KeyRule, Req, Ruleset, is_integer, math
{previous_tables}
__all__ = ["RULESET", "is_integer", "math"]

'''
    note = (
        f"\n# Not expressible as tables (they rewrite the log lines): {', '.join(draft.skipped)}\n"
        if draft.skipped
        else ""
    )
    limits = "\n    init_limit_mins=_previous.RULESET.init_limit_mins," if previous else ""
    tail = (
        note
        + "\nRULESET = Ruleset(\n    "
        + repr(version)
        + ",\n    {c.name: c for c in (\n"
        + "\n".join("    " + c for c in configs)
        + "\n    )},\n    benchmarks="
        + repr(tuple(draft.closed_bench))
        + ","
        + limits
        + "\n)\n"
    )
    return head + "\n\n".join(used) + "\n" + tail


if __name__ == "__main__":
    import mlperf_logging.compliance_checker as cc

    args = sys.argv[1:]
    if len(args) not in (1, 2):
        raise SystemExit("usage: python -m tools.generate_tables VERSION [PREVIOUS_VERSION]")
    sys.stdout.write(generate(args[0], Path(cc.__file__).parent, *args[1:]))
