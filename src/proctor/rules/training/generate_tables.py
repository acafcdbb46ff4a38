"""Developer tool: write a first draft of a ruleset table module from the official checker's YAML.

    python -m proctor.rules.training.generate_tables 6.1.0 > src/proctor/rules/training/ruleset_6_1_0.py

The official rules are Python expressions inside YAML; this turns each into a function in a table
module (source code that is reviewed and committed), so proctor never executes text read from a
file at check time. Each rule gets the rules-text section it comes from (`_source`). Run by hand
when a new official ruleset appears, then review the diff; nothing imports this at run time.
"""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import yaml

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


def generate(version: str, root: Path) -> str:
    folder = root / f"training_{version}"
    funcs: list[str] = []
    configs: list[str] = []
    closed_bench: list[str] = []
    skipped: list[str] = []
    for path in sorted(folder.glob("*.yaml")):
        name = path.stem
        items = yaml.load(path.read_text(), Loader=yaml.BaseLoader) or []
        if "loglines" in path.read_text():
            # rewrites the parsed log itself (stable_diffusion's aggregated evals): not expressible
            # as a table; such a log gets "no rules" from the engine
            skipped.append(name)
            continue
        begin = "None"
        keys: list[str] = []
        ident = re.sub(r"\W", "_", name)
        for item in items:
            kind = next(iter(item))
            body = item[kind]
            if kind == "BEGIN":
                fname = f"_{ident}_begin"
                funcs.append(_func(fname, body["CODE"], "s"))
                begin = fname
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
                    lst = re.search(r"in (\[.*\])", body["CHECK"]).group(1)
                    benches = yaml.safe_load(lst)
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
                        funcs.append(_func(f"{kid}_{arg}", body[part]))
                        args.append(f"{arg}={kid}_{arg}")
                if "FIRST_CHECK" in body:
                    args.append("first_check=(" + ", ".join(_checks(body["FIRST_CHECK"])) + ",)")
                if "ATLEAST_ONE_CHECK" in body:
                    args.append(f"atleast_one={_check(body['ATLEAST_ONE_CHECK'])}")
                args.append(f"source={_source(name, key)!r}")
                keys.append(f"        KeyRule({', '.join(args)}),")
            else:
                raise SystemExit(f"{path}: unsupported block {kind}")
        configs.append(
            f"    Config(\n        {name!r},\n        (\n"
            + "\n".join(keys)
            + f"\n        ),\n        begin={begin},\n    ),"
        )
    head = f'''"""Training compliance rules, ruleset {version}: every config of the official checker as a table.

Drafted by `generate_tables.py` from mlperf_logging 4.1.68 `training_{version}/*.yaml`, then
reviewed. Config names are the YAML names without `.yaml` ("common", "closed_<benchmark>", ...).
Where the rules text and the official checker differ, see docs/deviations.md (training section).
"""

# ruff: noqa: E501, E712, E731

from __future__ import annotations

from proctor.rules.training.types import Check, Config, KeyRule, Req, Ruleset, is_integer, math

__all__ = ["RULESET", "is_integer", "math"]

'''
    note = (
        f"\n# Not expressible as tables (they rewrite the log lines): {', '.join(skipped)}\n"
        if skipped
        else ""
    )
    tail = (
        note
        + "\nRULESET = Ruleset(\n    "
        + repr(version)
        + ",\n    {c.name: c for c in (\n"
        + "\n".join("    " + c for c in configs)
        + "\n    )},\n    benchmarks="
        + repr(tuple(closed_bench))
        + ",\n)\n"
    )
    return head + "\n\n".join(funcs) + "\n" + tail


if __name__ == "__main__":
    import mlperf_logging.compliance_checker as cc

    sys.stdout.write(generate(sys.argv[1], Path(cc.__file__).parent))
