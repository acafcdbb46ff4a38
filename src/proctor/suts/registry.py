"""Systems under test for the CLI: the factory a `--sut` SPEC names (suts/spec.py parses it into a
`SutSpec`, the grammar and quoting are there), built with its parameters.

A factory takes the parameters as keyword strings and returns (sut, qsl); built-in and user SUTs
load the same way. Packages register theirs in pyproject.toml:

    [project.entry-points."proctor.suts"]
    mysut = "my_package.sut:from_params"

The registry names no SUT module itself. A factory that declares a params dataclass (`PARAMS`,
which `proctor.suts.params.takes` sets) gets its parameters parsed, checked and listed from the
fields (suts/params.py); any other factory gets the strings, checked against its signature, and
`--list-suts` reads that signature. Either way an unknown key is refused with a did-you-mean and a
repeated key is refused, except a list parameter's (`url=A,url=B` is `url=A|B`).

A factory that takes a `context` keyword is also given the run's `RunContext` (suts/context.py: the
benchmark `--model` names and the test mode), e.g. for the generation parameters the rules fix per
benchmark; `context` is never a `k=v` key.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from proctor import entry_points
from proctor.errors import ConfigError
from proctor.suts import params as typed
from proctor.suts.context import CONTEXT_PARAM, RunContext, takes_context
from proctor.suts.params import Param
from proctor.suts.spec import SutSpec, as_spec

GROUP = "proctor.suts"

Factory = Callable[..., tuple[Any, Any]]




def registered() -> dict[str, str]:
    """Registered SUT name -> "module:factory", from installed entry points (plus the source fallback)."""
    return entry_points.registered(GROUP)


def _load_file(path_text: str) -> Any:
    path = Path(path_text)
    if not path.is_file():
        raise ConfigError(f"no such file: {path}", key="--sut")
    name = f"proctor_user_sut_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"cannot load {path} as Python", key="--sut")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's file: say where it failed, in one line
        sys.modules.pop(name, None)
        raise ConfigError(f"cannot load {path}: {type(exc).__name__}: {exc}", key="--sut") from exc
    return module


def _resolve_target(target: str, from_file: bool) -> Factory:
    module_name, _, attr = target.rpartition(":")
    try:
        module = _load_file(module_name) if from_file else importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise ConfigError(f"cannot import '{module_name}': {exc}", key="--sut") from None
    factory: Factory | None = getattr(module, attr, None)
    if not callable(factory):
        raise ConfigError(f"'{module_name}' has no callable '{attr}'", key="--sut")
    return factory


def factory_of(spec: SutSpec | str) -> tuple[str, Factory, dict[str, str]]:
    """(display name, factory, params) for a --sut SPEC; a repeated key is refused unless it is a list's."""
    parsed = as_spec(spec)
    name, factory = _named_factory(parsed.kind, parsed.target)
    return name, factory, typed.merge(parsed.params, params_class(factory), name)


def _named_factory(kind: str, target: str) -> tuple[str, Factory]:
    if kind == "name":
        known = registered()
        if target not in known:
            hint = difflib.get_close_matches(target, list(known), n=1, cutoff=0.6)
            raise ConfigError(
                f"unknown SUT '{target}'"
                + (f"; did you mean '{hint[0]}'?" if hint else "")
                + f" (registered: {', '.join(known) or 'none'}; or give module:factory or file.py:factory;"
                " see --list-suts)",
                key="--sut",
            )
        return target, _resolve_target(known[target], False)
    return target, _resolve_target(target, kind == "file")


def params_class(factory: Factory) -> type | None:
    """The params dataclass a factory declares (its `PARAMS`, or its module's), else None."""
    declared = getattr(factory, "PARAMS", None)
    if declared is None:
        declared = getattr(sys.modules.get(getattr(factory, "__module__", "") or ""), "PARAMS", None)
    return declared if typed.is_params(declared) else None


def _check_signature(name: str, factory: Factory, params: dict[str, str]) -> None:
    try:
        signature = inspect.signature(factory)
    except ValueError:  # no signature to check (a builtin): the call says
        return
    if any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values()):
        return
    known = [p.name for p in params_of(factory)]
    for key in params:
        if key not in known:
            raise typed.unknown_key(key, known, name)
    try:
        signature.bind(**params)
    except TypeError as exc:
        raise ConfigError(f"SUT '{name}': {exc} (known: {', '.join(known) or 'none'})", key="--sut") from None


def build(spec: SutSpec | str, context: RunContext | None = None) -> tuple[Any, Any]:
    """(sut, qsl) from a --sut SPEC: factory(**params), the params checked against its fields or signature;
    a factory that takes `context=` also gets the run's (the benchmark and mode) when one is given."""
    name, factory, params = factory_of(spec)
    cls = params_class(factory)
    if cls is not None:
        typed.parse(cls, params, name)  # refuse a wrong value before the factory loads anything
    else:
        _check_signature(name, factory, params)
    if context is not None and takes_context(factory):
        result = factory(**params, context=context)
    else:
        result = factory(**params)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise ConfigError(
            f"the factory of '{name}' must return (sut, qsl), got {type(result).__name__}", key="--sut"
        )
    return result


def params_of(factory: Factory) -> list[Param]:
    """A factory's parameters: from its params dataclass, else its signature (defaults as written)."""
    cls = params_class(factory)
    if cls is not None:
        return typed.describe(cls)
    params = []
    for p in inspect.signature(factory).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name == CONTEXT_PARAM:
            continue  # `context` is the run's (suts/context.py), not a k=v parameter
        default = "" if p.default is p.empty else str(p.default)
        params.append(Param(p.name, default))
    return params


def describe() -> list[tuple[str, str, list[Param] | str]]:
    """(name, target, parameters or why they could not be read) for every registered SUT."""
    rows: list[tuple[str, str, list[Param] | str]] = []
    for name, target in registered().items():
        try:
            rows.append((name, target, params_of(_resolve_target(target, False))))
        except (ConfigError, ImportError) as exc:  # a SUT whose dependencies are missing still shows
            rows.append((name, target, f"cannot load: {exc}"))
    return rows


def factory_doc(factory: Factory) -> str:
    doc = inspect.getdoc(factory) or ""
    return doc.splitlines()[0] if doc else ""


__all__ = [
    "GROUP",
    "Param",
    "build",
    "describe",
    "factory_of",
    "params_class",
    "params_of",
    "registered",
]
