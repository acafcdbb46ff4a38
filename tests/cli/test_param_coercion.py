"""cli/param_coercion.py: every parameter of every command coerces a value as typer's own (pydantic)
coercion does, or hands it to typer: the same value of the same type, or the same refusal."""

from __future__ import annotations

import enum
import typing
from pathlib import Path

import pytest
import typer
from typer._coercion import build_runtime_param

from proctor.cli.apps import app
from proctor.cli.main import _register
from proctor.cli.param_coercion import LightParam

TEXTS = ["", " ", "a", "x/y", "/abs/p", "12", "0", "-3", "+4", " 5", "07", "1_000", "1.5", "-2.25", "1.", ".5",
         "1e3", "nan", "inf", "0x10", "99999999999999999999", "1048577", "65536", "\u0663", "a\x00b", "\udcff",
         "True", "false", "offline", "Offline", "SERVER"]


def _params() -> list[tuple[str, typing.Any, typing.Any]]:
    _register()
    root = typer.main.get_command(app)
    out = []
    stack: list[tuple[str, typing.Any]] = [("proctor", root)]
    while stack:
        path, cmd = stack.pop()
        ctx = cmd.context_class(cmd, info_name=path)
        for param in [*cmd.params, cmd.get_help_option(ctx)]:
            if param is not None and getattr(param, "type_descriptor", None) is not None:
                out.append((f"{path} {param.name}", param, ctx))
        stack.extend((f"{path} {name}", sub) for name, sub in getattr(cmd, "commands", {}).items())
    return out


PARAMS = _params()


def _values(param: typing.Any) -> list[typing.Any]:
    annotation = param.type_descriptor.annotation
    item = typing.get_args(annotation)[0] if typing.get_origin(annotation) is list else annotation
    extra: list[typing.Any] = [param.default] if param.default is not None else []
    if isinstance(item, type) and issubclass(item, enum.Enum):
        extra += [m.value for m in item] + [m.name for m in item] + list(item)
    if item in (int, float):
        extra += [0, 7, -1, 1.5, True]
    values = [*TEXTS, *extra]
    if typing.get_origin(annotation) is list:
        return [tuple(values[i : i + 3]) for i in range(0, len(values), 3)] + [(), ("a",), ("a", "\x00")]
    return values


def _outcome(runtime: typing.Any, value: typing.Any, param: typing.Any, ctx: typing.Any) -> tuple[str, typing.Any]:
    try:
        got = runtime.coerce(value, param=param, ctx=ctx)
    except Exception as exc:  # noqa: BLE001 - the refusal itself is compared
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        return "refused", (type(exc).__name__, message)
    return "value", (type(got).__name__, repr(got))


def test_every_command_has_parameters_to_compare():
    annotations = {p.type_descriptor.annotation for _, p, _ in PARAMS}
    assert {str, Path, int, float} <= annotations  # by identity: Path's repr names pathlib._local from 3.13
    kinds = {repr(a) for a in annotations}
    assert any("enum" in k for k in kinds) and any(k.startswith("list[") for k in kinds)


@pytest.mark.parametrize(("name", "param", "ctx"), PARAMS, ids=[n for n, _, _ in PARAMS])
def test_light_coercion_equals_typers(name, param, ctx):
    d = param.type_descriptor
    if d.file_annotation is not None:
        pytest.skip("typer opens files itself")
    light = LightParam(d.parameter_info, d.annotation, d)
    typer_own = build_runtime_param(d)
    for value in _values(param):
        assert _outcome(light, value, param, ctx) == _outcome(typer_own, value, param, ctx), (name, value)


def test_plain_values_need_no_pydantic():
    """What the light coercion takes itself never reaches typer's pydantic adapter."""
    import subprocess
    import sys

    code = (
        "import contextlib, io, sys\n"
        "from proctor.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    main.run(['early-stopping', '--percentile', '90', '--queries', '10000', '--json'])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic' or m == 'typer._adapters'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
