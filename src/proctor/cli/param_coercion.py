"""Command-line values turned into their Python types without pydantic, where that is certain.

typer (0.29 and later) coerces every parameter that is not a flag through a pydantic TypeAdapter,
built on first use: importing pydantic and building the adapters costs more than the rest of a
command's start-up (`proctor check submission DIR` spent about half its start there). For the
values proctor's commands take in their plain form (text, a path, a whole or decimal number in
digits, a choice, lists of these) the result is certain without it, and typer's own helpers give
it (`coerce_cli_path`, `coerce_cli_choice`). Any other value, annotation or setting goes to typer's
adapter as before, so what typer refuses is refused in typer's words: a value either comes out as
typer would make it, or typer makes it (tests/cli/test_param_coercion.py compares both on every
parameter of every command).

`install()` (cli/apps.py calls it) makes typer's `_TyperParameter.get_runtime_param`, which builds a
parameter's coercion on first use, build a LightParam instead: every parameter of the process's
typer commands, typer's own --help options included, coerces through it. A typer without that
seam (`RuntimeParam`, `build_runtime_param`, `_TyperParameter.get_runtime_param`) is left as it is.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args, get_origin

from proctor.typed_records import record

try:  # typer's coercion seam (0.29): without it typer coerces as it always did
    from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
    from typer._param_types import choice_coercion_annotation, coerce_cli_choice, coerce_cli_path
    from typer.core import _TyperParameter
except ImportError:  # pragma: no cover - another typer
    RuntimeParam = None  # type: ignore[assignment,misc]

_INT = re.compile(r"-?[0-9]{1,18}")
_DECIMAL = re.compile(r"-?[0-9]{1,18}(?:\.[0-9]{1,18})?")
_UNSURE = object()  # the value is not one coerced here: typer's adapter decides


def _text(value: Any) -> bool:
    return type(value) is str and "\x00" not in value


def _in_range(number: float, info: Any) -> bool:
    return (info.min is None or number >= info.min) and (info.max is None or number <= info.max)


def _leaf(annotation: Any, info: Any, value: Any, param: Any, ctx: Any) -> Any:
    """The value typer's adapter gives for `value` under `annotation`, or _UNSURE."""
    if info.parser is not None:
        return _UNSURE
    if annotation is str:
        return value if _text(value) else _UNSURE
    if isinstance(annotation, type) and issubclass(annotation, Path):
        path_type = info.path_type or annotation
        if not (_text(value) and isinstance(path_type, type) and issubclass(path_type, Path)):
            return _UNSURE
        return coerce_cli_path(path_type(value), info, path_type=path_type, param=param, ctx=ctx)
    if annotation is int or annotation is float:
        if type(value) is str and (_INT if annotation is int else _DECIMAL).fullmatch(value):
            number = annotation(value)
        elif type(value) is annotation or (annotation is float and type(value) is int):
            number = annotation(value)  # a default written as a number
        else:
            return _UNSURE
        return number if _in_range(number, info) else _UNSURE  # a bound or a clamp: typer's words
    choices = choice_coercion_annotation(annotation, info)
    if choices is not None:
        return coerce_cli_choice(value, choices=choices[0], case_sensitive=choices[1], ctx=ctx)
    return _UNSURE


if RuntimeParam is not None:

    @record(frozen=True)
    class LightParam(RuntimeParam):
        """A runtime parameter that coerces the certain values itself and hands the rest to typer's."""

        descriptor: TypeDescriptor

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            try:
                out = self._light(value, param, ctx)
            except Exception:  # noqa: BLE001 - typer's adapter says what is wrong, in its words
                out = _UNSURE
            if out is _UNSURE:
                return self.typer_param()._coerce_value(value, param=param, ctx=ctx)
            return out

        def _light(self, value: Any, param: Any, ctx: Any) -> Any:
            info, annotation = self.parameter_info, self.annotation
            if get_origin(annotation) is list and isinstance(value, list | tuple):
                (item,) = get_args(annotation)
                out = [_leaf(item, info, v, param, ctx) for v in value]
                return _UNSURE if any(v is _UNSURE for v in out) else out
            return _leaf(annotation, info, value, param, ctx)

        def typer_param(self) -> Any:
            """typer's own runtime parameter (its pydantic adapter), built on first need."""
            built = self.__dict__.get("_typer")
            if built is None:
                built = build_runtime_param(self.descriptor)
                object.__setattr__(self, "_typer", built)
            return built


def install() -> None:
    """Make typer build a LightParam where it would build its own runtime parameter (once per process)."""
    if RuntimeParam is None or not hasattr(_TyperParameter, "get_runtime_param"):  # pragma: no cover
        return
    typer_get = _TyperParameter.get_runtime_param
    if getattr(typer_get, "proctor_light", False):
        return

    def get_runtime_param(self: Any) -> Any:
        descriptor = self.type_descriptor
        if self._runtime_param is None and descriptor.file_annotation is None:  # typer opens files itself
            self._runtime_param = LightParam(descriptor.parameter_info, descriptor.annotation, descriptor)
        return typer_get(self)

    get_runtime_param.proctor_light = True  # type: ignore[attr-defined]
    _TyperParameter.get_runtime_param = get_runtime_param  # type: ignore[method-assign]


__all__ = ["install"]
