"""Canonical JSON of every training ruleset's every table (all fields, in order).

Two fidelities. `exact=True` fingerprints each function by its bytecode, constants and names (no
line numbers, no function names), so a rewrite of the table modules that keeps the behaviour keeps
the dump byte-identical; bytecode depends on the Python version, so this is a developer check:

    PYTHONPATH=src python tests/training/ruleset_dump.py --exact > /tmp/rulesets.json

`exact=False` (the default, what the tests pin) writes a function as its name, or `<lambda>` beside
the check's expression text, which is the same on every Python version.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import sys
import types
from typing import Any

from proctor.rules.training.types import Check, Config, EndRule, KeyRule, Ruleset

VERSIONS = ("4.0.0", "4.1.0", "5.0.0", "5.1.0", "6.0.0", "6.1.0")


def _code(co: types.CodeType) -> dict[str, Any]:
    return {
        "code": co.co_code.hex(),
        "consts": [_code(c) if isinstance(c, types.CodeType) else repr(c) for c in co.co_consts],
        "names": list(co.co_names),
        "varnames": list(co.co_varnames),
        "freevars": list(co.co_freevars),
    }


def _fn(fn: Any, exact: bool) -> Any:
    if fn is None:
        return None
    if not exact:
        return fn.__name__
    out = _code(fn.__code__)
    if fn.__closure__:
        out["closure"] = [repr(c.cell_contents) for c in fn.__closure__]
    if fn.__defaults__:
        out["defaults"] = [repr(d) for d in fn.__defaults__]
    return out


def _check(c: Check | None, exact: bool) -> Any:
    return None if c is None else {"expr": c.expr, "fn": _fn(c.fn, exact)}


def _key(k: KeyRule, exact: bool) -> dict[str, Any]:
    return {
        "name": k.name,
        "req": str(k.req),
        "checks": [_check(c, exact) for c in k.checks],
        "pre": _fn(k.pre, exact),
        "post": _fn(k.post, exact),
        "first_check": [_check(c, exact) for c in k.first_check],
        "atleast_one": _check(k.atleast_one, exact),
        "at_least": k.at_least,
        "alternatives": list(k.alternatives),
        "source": k.source,
    }


def _end(e: EndRule | None, exact: bool) -> Any:
    if e is None:
        return None
    return {"pre": _fn(e.pre, exact), "checks": [[t, _fn(f, exact)] for t, f in e.checks]}


def dump_config(c: Config, exact: bool = False) -> dict[str, Any]:
    return {
        "name": c.name,
        "keys": [_key(k, exact) for k in c.keys],
        "begin": _fn(c.begin, exact),
        "end": _end(c.end, exact),
        "source": c.source,
    }


def own_configs(rs: Ruleset) -> dict[str, Config]:
    """The ruleset's tables, without those of benchmarks registered at run time (by other tests)."""
    extra = {f"{d}_{b}" for d in ("closed", "open") for b in rs.extra_benchmarks}
    return {n: c for n, c in rs.configs.items() if n not in extra}


def dump_ruleset(rs: Ruleset, exact: bool = False) -> dict[str, Any]:
    return {
        "version": rs.version,
        "configs": [dump_config(c, exact) for c in own_configs(rs).values()],
        "config_names": list(own_configs(rs)),
        "benchmarks": list(rs.benchmarks),
        "root": rs.root,
        "init_limit_mins": dict(rs.init_limit_mins),
        "precisions": list(rs.precisions),
    }


def ruleset(version: str) -> Ruleset:
    """The ruleset as its module defines it (benchmarks registered at run time left out)."""
    rs = importlib.import_module(f"proctor.rules.training.ruleset_{version.replace('.', '_')}").RULESET
    assert isinstance(rs, Ruleset)
    return rs


def canonical(obj: Any) -> str:
    return json.dumps(obj, indent=1, ensure_ascii=False)


def table_hashes(exact: bool = False) -> dict[str, dict[str, str]]:
    """sha256 (first 16 hex digits) of each table's canonical dump, per ruleset."""
    out: dict[str, dict[str, str]] = {}
    for v in VERSIONS:
        rs = ruleset(v)
        out[v] = {
            name: hashlib.sha256(canonical(dump_config(c, exact)).encode()).hexdigest()[:16]
            for name, c in own_configs(rs).items()
        }
    return out


def main(argv: list[str]) -> int:
    exact = "--exact" in argv
    if "--hashes" in argv:
        print(canonical(table_hashes(exact)))
    else:
        print(canonical([dump_ruleset(ruleset(v), exact) for v in VERSIONS]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
