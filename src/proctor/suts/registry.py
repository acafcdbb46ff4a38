"""Named systems under test for the CLI: `--sut NAME[:k=v,k=v]`.

Entries are "module:factory" strings so a SUT's heavy dependencies are imported only when it is
chosen. A factory takes the parsed parameters as keyword strings and returns (sut, qsl).
"""

from __future__ import annotations

import importlib
from typing import Any

from proctor.errors import ConfigError

SUTS: dict[str, str] = {
    "synthetic": "proctor.suts.synthetic:from_params",
    "digits": "proctor.workloads.digits.sut:from_params",
}


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    name, _, rest = spec.partition(":")
    params: dict[str, str] = {}
    for item in filter(None, rest.split(",")):
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"SUT parameter '{item}' is not key=value", key=name)
        params[key.strip()] = value.strip()
    return name, params


def build(spec: str) -> tuple[Any, Any]:
    name, params = parse_spec(spec)
    if name not in SUTS:
        raise ConfigError(f"unknown SUT '{name}'; known: {', '.join(sorted(SUTS))}", key="--sut")
    module_name, _, factory = SUTS[name].partition(":")
    return getattr(importlib.import_module(module_name), factory)(**params)
