"""The fast path (cli/fast_path.py): its table states each command's parameters as the typer
command declares them, and a command line gives the same stdout, stderr and exit status on both
paths, whether the fast path takes it or hands it to typer."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import typing
from dataclasses import replace
from pathlib import Path

import pytest

from proctor.cli import fast_path, main, output
from proctor.cli.fast_path import FAST_COMMANDS
from tests.checks.checks_corpus import build_valid_tree, edit_detail


def _typer_command(words: tuple[str, ...]):
    import typer

    from proctor.cli.apps import app

    main._register()
    command = typer.main.get_command(app)
    for word in words:
        command = command.commands[word]  # type: ignore[attr-defined]
    return command


def _body(entry: fast_path.FastCommand):
    import importlib

    module, _, function = entry.body.partition(":")
    return getattr(importlib.import_module(module), function)


def _base_type(annotation: object) -> object:
    return typing.get_args(annotation)[0] if typing.get_origin(annotation) is typing.Annotated else annotation


def _disagreements(entry: fast_path.FastCommand) -> list[str]:
    """Where the table entry and the typer command differ: every parameter of the command must be
    in the table under the same name, option, type and kind (argument, flag, option taking a value),
    with nothing click would add on its own (an environment variable, a callback, a --no- form,
    several values); the body takes the same names with the same defaults, so a parameter left off
    the line means the same on both paths."""
    command = _typer_command(entry.words)
    hints = typing.get_type_hints(command.callback, include_extras=True)
    wrong: list[str] = []
    arguments, options = [], {}
    for param in command.params:
        if param.envvar is not None or param.callback is not None or param.multiple or param.nargs != 1:
            wrong.append(f"{param.name}: an envvar, callback or several values")
        if param.secondary_opts or param.is_eager:
            wrong.append(f"{param.name}: a secondary form or eager")
        kind = _base_type(hints[param.name])
        if param.param_type_name == "argument":
            if not param.required:
                wrong.append(f"{param.name}: an optional argument")
            arguments.append((param.name, kind))
            continue
        if param.required or param.is_flag is not (kind is bool) or (kind is bool and param.default is not False):
            wrong.append(f"{param.name}: required, or a flag that is not a plain bool")
        for opt in param.opts:
            options[opt] = (param.name, kind)
    if tuple(arguments) != entry.arguments:
        wrong.append(f"arguments {arguments} != {entry.arguments}")
    if options != entry.options:
        wrong.append(f"options {options} != {entry.options}")
    wrong += [f"{name}: type {kind}" for name, kind in (*entry.arguments, *entry.options.values())
              if kind not in fast_path.KINDS]
    body = inspect.signature(_body(entry)).parameters
    if list(body) != [p.name for p in command.params]:
        wrong.append(f"body parameters {list(body)}")
    for param in command.params:
        expected = inspect.Parameter.empty if param.required else param.default
        if param.name in body and body[param.name].default != expected:
            wrong.append(f"{param.name}: body default {body[param.name].default!r} != {expected!r}")
    return wrong


@pytest.mark.parametrize("entry", FAST_COMMANDS, ids=lambda e: " ".join(e.words))
def test_the_table_is_the_typer_commands_parameters(entry):
    assert _disagreements(entry) == []


def _renamed(options: dict, old: str, new: str) -> dict:
    return {(new if k == old else k): v for k, v in options.items()}


@pytest.mark.parametrize("change", [
    lambda e: replace(e, options=_renamed(e.options, "--round", "--rounds")),
    lambda e: replace(e, options={k: v for k, v in e.options.items() if k != "--json"}),
    lambda e: replace(e, options={**e.options, "--round": ("round_", Path)}),
    lambda e: replace(e, options={**e.options, "--json": ("as_json", str)}),
    lambda e: replace(e, options={**e.options, "--jsn": ("as_json", bool)}),
    lambda e: replace(e, arguments=(("directory", str),)),
    lambda e: replace(e, arguments=()),
    lambda e: replace(e, body="proctor.cli.tree_commands:summarize_command"),
], ids=["renamed", "dropped", "type", "flag-takes-value", "extra", "argument-type", "no-argument", "other-body"])
def test_a_table_that_drifted_is_caught(change):
    assert _disagreements(change(FAST_COMMANDS[0])) != []


@pytest.fixture(scope="module")
def trees(tmp_path_factory) -> dict[str, Path]:
    valid = build_valid_tree(tmp_path_factory.mktemp("valid"))
    invalid = build_valid_tree(tmp_path_factory.mktemp("invalid"))
    detail = next(invalid.rglob("offline/performance/run_1/mlperf_log_detail.txt"))
    edit_detail(detail, "effective_min_duration_ms", "1000")
    empty = tmp_path_factory.mktemp("empty")
    return {"valid": valid, "invalid": invalid, "empty": empty, "missing": empty / "nosuch"}


def _both(capsys, args: list[str]) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    results = []
    for fast in (True, False):
        output.set_debug(False)
        capsys.readouterr()
        rc = main.run(list(args), fast=fast)
        captured = capsys.readouterr()
        results.append((rc, captured.out, captured.err))
    return results[0], results[1]


# lines the fast path takes: (words, tree, then the rest); the tree is the first argument
TAKEN = [
    ("valid", ["--round", "v4.1", "--json"]),
    ("valid", ["--round=v4.1"]),
    ("valid", ["--json", "--round", "v4.1", "--allow-unofficial-loadgen", "--skip-extra-accuracy-files-check"]),
    ("invalid", ["--round", "v4.1", "--json"]),
    ("invalid", ["--round", "v4.1"]),
    ("valid", ["--json"]),  # the current round: the v4.1 tree's findings under the current rules
    ("missing", ["--json"]),
    ("missing", []),
    ("empty", ["--round", "v4.1"]),
    ("valid", ["--round", "v0.5", "--json"]),
    ("valid", ["--round="]),
]


@pytest.mark.parametrize(("tree", "rest"), TAKEN, ids=lambda x: x if isinstance(x, str) else " ".join(x))
def test_check_submission_is_the_same_on_both_paths(capsys, trees, tree, rest):
    args = ["check", "submission", str(trees[tree]), *rest]
    assert fast_path.match(args) is not None
    fast, slow = _both(capsys, args)
    assert fast == slow
    rc, out, err = fast
    if tree == "valid" and "--round" in rest[:1] and rest[1:2] == ["v4.1"]:
        assert rc == 0
    if tree in ("invalid", "empty"):  # an empty folder is a tree with nothing in it: checked, invalid
        assert rc == 1 and out
    if tree == "missing" or "v0.5" in rest or "--round=" in rest:
        assert rc == 2 and err.startswith("error: ") and len(err.strip().splitlines()) == 1
    if "--json" in rest:
        assert isinstance(json.loads(out), dict)


@pytest.mark.parametrize(("tree", "rest"), [("valid", ["--round", "v4.1", "--json"]), ("valid", ["--csv"]),
                                            ("missing", ["--json"]), ("empty", [])])
def test_summarize_is_the_same_on_both_paths(capsys, trees, tree, rest):
    args = ["summarize", str(trees[tree]), *rest]
    assert fast_path.match(args) is not None
    fast, slow = _both(capsys, args)
    assert fast == slow
    assert fast[0] == (0 if tree == "valid" else 2)


# lines the fast path leaves to typer: help, usage errors, anything it does not parse itself; with
# the status typer gives (1: a line typer takes, checked under the current round's rules)
LEFT = [
    (["check", "submission", "{valid}", "--help"], 0),
    (["check", "submission", "--help"], 0),
    (["check", "submission"], 2),
    (["check", "submission", "{valid}", "{valid}"], 2),
    (["check", "submission", "{valid}", "--rund", "v4.1"], 2),
    (["check", "submission", "{valid}", "--round"], 2),
    (["check", "submission", "{valid}", "--round", "--json"], 2),
    (["check", "submission", "{valid}", "--json=yes"], 2),
    (["check", "submission", "{valid}", "--no-json"], 2),
    (["check", "submission", "-"], 2),
    (["check", "submission", "{valid}", "-h"], 2),
    (["check", "submission", "{valid}", "--json", "--json"], 1),
    (["check", "submission", "{valid}", "--round", "v4.1", "--round", "v5.1"], 1),
    (["check", "submission", "--", "{valid}"], 1),
    (["check", "--help"], 0),
    (["summarize", "{valid}", "--json", "--jsn"], 2),
    (["--version"], 0),
]


@pytest.mark.parametrize(("args", "status"), LEFT, ids=lambda a: " ".join(a) if isinstance(a, list) else str(a))
def test_unusual_lines_go_to_typer_and_read_as_before(capsys, trees, args, status):
    args = [a.format(valid=trees["valid"]) for a in args]
    assert fast_path.match(args) is None
    fast, slow = _both(capsys, args)
    assert fast == slow
    rc, out, err = fast
    assert rc == status, (out, err)
    if status == 2:
        assert err.startswith("error: ") and len(err.strip().splitlines()) == 1
    else:
        assert out and (status == 1 or not err)


def test_fail_on_the_fast_path_is_its_status(capsys, trees, monkeypatch):
    """A body's `fail` (typer.Exit, typer loaded only then) and a bug both keep their status."""
    from proctor.checks import submission

    def boom(*args, **kwargs):
        raise ValueError("bug")

    monkeypatch.setattr(submission, "check_submission", boom)
    fast, slow = _both(capsys, ["check", "submission", str(trees["valid"]), "--json"])
    assert fast == slow and fast[0] == output.EXIT_INTERNAL and "internal error: ValueError: bug" in fast[2]


def test_the_fast_path_loads_no_typer_and_nothing_heavy(trees):
    """`proctor check submission DIR --json` as a script runs it: neither typer nor any library
    the command does not need is imported (the start-up it saves is typer's)."""
    from tests.cli.test_fast_start import HEAVY

    code = (
        "import contextlib, io, sys\n"
        "from proctor.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    rc = main.run(['check', 'submission', {str(trees['valid'])!r}, '--round', 'v4.1', '--json'])\n"
        "assert rc == 0 and out.getvalue().startswith('{'), (rc, out.getvalue()[:200])\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    mods = set(res.stdout.split())
    assert "proctor.checks.submission" in mods  # it did run the check
    assert sorted(m for m in mods if m.split(".")[0] in ("typer", "click", "pydantic", "rich")) == []
    assert sorted(m for m in mods if m.split(".")[0] in HEAVY and m.split(".")[0] != "orjson") == []


@pytest.mark.parametrize(("tree", "status"), [("valid", 0), ("invalid", 1), ("missing", 2)])
def test_the_fast_path_leaves_without_teardown_and_loses_nothing(trees, tree, status):
    """`main()` ends a fast-path command with os._exit (the interpreter's teardown was 14 ms of a
    small tree's check): its status stays, the whole document reaches a pipe, an exit handler runs,
    and the teardown does not (a finalizer the teardown would call never prints)."""
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('exit handler ran', file=sys.stderr, flush=True))\n"
        "class Torn:\n"
        "    def __del__(self):\n"
        "        print('torn down', file=sys.stderr, flush=True)\n"
        "keep = Torn()\n"
        f"sys.argv = ['proctor', 'check', 'submission', {str(trees[tree])!r}, '--round', 'v4.1', '--json']\n"
        "from proctor.cli.main import main\n"
        "main()\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == status, res.stderr
    doc = json.loads(res.stdout)  # one whole document, however long
    if status == 2:
        assert doc["exit_code"] == 2 and "error" in doc
    else:
        assert doc["kind"] == "proctor.check.submission" and doc["verdict"] == ("VALID" if status == 0 else "INVALID")
    assert "exit handler ran" in res.stderr
    assert "torn down" not in res.stderr


def test_a_typer_line_still_ends_with_the_teardown(trees):
    """Only the fast path leaves early: a line typer parses (here `--json` twice) exits as before."""
    code = (
        "import sys\n"
        "class Torn:\n"
        "    def __del__(self):\n"
        "        print('torn down', file=sys.stderr, flush=True)\n"
        "keep = Torn()\n"
        f"sys.argv = ['proctor', 'check', 'submission', {str(trees['valid'])!r}, '--round', 'v4.1', '--json',"
        " '--json']\n"
        "from proctor.cli.main import main\n"
        "main()\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "torn down" in res.stderr
