"""Every command's help page is one a user can act on (issue 23, journey 9): examples that name only
options the command has, readable metavars (never `<bool>` or a bare type like `<int>`), help on
every option, one spelling per concept and `-o/--output` wherever a command writes output.

The commands are walked from the CLI app itself, so a new command is held to the same rules."""

from __future__ import annotations

import re
import shlex
from typing import Any

import pytest
import typer

from proctor.cli.apps import app
from proctor.cli.main import _register

# Commands that write files or folders the user names: each takes -o/--output.
WRITES_OUTPUT = {
    "run",
    "audit",
    "sweep",
    "demo",
    "report",
    "submission package",
    "submission truncate-accuracy",
    "training train",
    "training package",
    "training reference-rcps",
    "training summarize",
    "results compare",
}
# A type label where a metavar should be: `<bool>`, `<int>`, `<path>`, `<float range>`, `<list[...]>`.
BARE_TYPE = re.compile(r"<(?:bool|str|int|float|path|file|dir|text|list\[[^>]*\])(?: range)?>")


def _walk() -> tuple[list[tuple[str, Any]], list[str]]:
    """(path, click command) of every visible leaf command, as the root group resolves them, and
    the paths of the groups (the root is "")."""
    _register()
    root = typer.main.get_command(app)
    leaves: list[tuple[str, Any]] = []
    groups: list[str] = [""]

    def walk(group: Any, prefix: list[str], ctx: Any) -> None:
        for name in group.list_commands(ctx):
            cmd = group.get_command(ctx, name)
            if cmd is None or cmd.hidden:
                continue
            path = [*prefix, name]
            if getattr(cmd, "commands", None):
                groups.append(" ".join(path))
                walk(cmd, path, cmd.make_context(name, [], parent=ctx, resilient_parsing=True))
            else:
                leaves.append((" ".join(path), cmd))

    walk(root, [], root.make_context("proctor", [], resilient_parsing=True))
    return leaves, groups


LEAVES, GROUPS = _walk()
IDS = [path for path, _ in LEAVES]


def _names(cmd: Any) -> set[str]:
    """Every option spelling the command accepts (hidden aliases too)."""
    return {o for p in cmd.params for o in (*p.opts, *p.secondary_opts) if o.startswith("-")} | {"--help"}


def _examples(text: str) -> list[str]:
    _, sep, rest = text.partition("Examples:")
    assert sep, "no Examples section"
    return [line.strip() for line in rest.splitlines() if line.strip().startswith("proctor ")]


def test_the_walk_finds_every_command():
    assert len(LEAVES) >= 20
    assert {"training", "check", "submission", "serve"} <= set(GROUPS)
    assert set(IDS) >= WRITES_OUTPUT


@pytest.mark.parametrize(("path", "cmd"), LEAVES, ids=IDS)
def test_help_page_has_examples_of_this_command_with_its_own_options(cli, path, cmd):
    r = cli(*path.split(), "--help")
    assert r.rc == 0, r.err
    examples = _examples(r.out)
    assert len(examples) >= 2, examples
    accepted = _names(cmd)
    for line in examples:
        words = shlex.split(line.split(" > ")[0])
        assert words[: 1 + len(path.split())] == ["proctor", *path.split()], line
        flags = {w.split("=")[0] for w in words if w.startswith("-")}
        assert flags <= accepted, (line, flags - accepted)


@pytest.mark.parametrize("group", GROUPS, ids=[g or "proctor" for g in GROUPS])
def test_a_group_help_page_has_examples_of_its_commands(cli, group):
    r = cli(*group.split(), "--help")
    assert r.rc == 0, r.err
    commands = {path for path, _ in LEAVES} | set(GROUPS)
    examples = _examples(r.out)
    assert len(examples) >= 2, examples
    for line in examples:
        words = shlex.split(line)[1:]
        named = next((" ".join(words[:n]) for n in (2, 1) if " ".join(words[:n]) in commands), None)
        assert named is not None and named.startswith(group) or words == ["COMMAND", "--help"], line


@pytest.mark.parametrize(("path", "cmd"), LEAVES, ids=IDS)
def test_help_page_shows_readable_metavars_and_help_on_every_option(cli, path, cmd):
    r = cli(*path.split(), "--help")
    assert "<bool>" not in r.out
    ctx = cmd.make_context(path.split()[-1], [], resilient_parsing=True)
    for p in cmd.params:
        assert (p.help or "").strip(), f"{path} {p.name}: no help"  # a hidden alias says what it stands for
        if getattr(p, "hidden", False):
            continue
        record = p.get_help_record(ctx)
        assert record is not None, p.name
        if p.param_type_name == "option":
            assert not BARE_TYPE.search(record[0]), f"{path}: {record[0]!r} shows a type, not a metavar"
        else:  # an argument is named in capitals (typer adds its type after the name)
            assert p.metavar and p.metavar.split(".")[0].isupper(), f"{path} {p.name}: no metavar"


@pytest.mark.parametrize(("path", "cmd"), LEAVES, ids=IDS)
def test_output_is_dash_o_and_dash_dash_output(path, cmd):
    """One form for the output: `-o/--output` on every command that writes; never `--output` alone."""
    visible = [p for p in cmd.params if p.param_type_name == "option" and not p.hidden]
    outputs = [p for p in visible if "--output" in p.opts or "-o" in p.opts]
    for p in outputs:
        assert {"-o", "--output"} <= set(p.opts), (path, p.opts)
    assert bool(outputs) == (path in WRITES_OUTPUT), (path, [p.opts for p in outputs])


def test_bert_train_samples_is_one_spelling_and_the_old_one_still_parses():
    cmds = dict(LEAVES)
    for path in ("training check-rcp", "training check-package"):
        shown = {o for p in cmds[path].params if not getattr(p, "hidden", False) for o in p.opts}
        assert "--bert-train-samples" in shown and "--rcp-bert-train-samples" not in shown, path
    package = cmds["training check-package"]
    ctx = package.make_context("check-package", [".", "--rcp-bert-train-samples"])
    assert ctx.params["rcp_bert_train_samples"] is True and ctx.params["bert_train_samples"] is False
    ctx = package.make_context("check-package", [".", "--bert-train-samples"])
    assert ctx.params["bert_train_samples"] is True


def test_training_train_takes_dash_o_and_the_old_positional(tmp_path):
    train = dict(LEAVES)["training train"]
    assert train.make_context("train", ["-o", str(tmp_path)]).params["output"] == tmp_path
    assert train.make_context("train", [str(tmp_path)]).params["output_arg"] == tmp_path


def test_training_train_without_or_with_two_folders_is_one_line_exit_2(cli, tmp_path):
    r = cli("training", "train")
    assert r.rc == 2 and "-o/--output" in r.err and len(r.err.strip().splitlines()) == 1, r.err
    r = cli("training", "train", "-o", tmp_path / "a", tmp_path / "b")
    assert r.rc == 2 and "not both" in r.err, r.err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_truncate_accuracy_keeps_its_long_output_spelling():
    truncate = dict(LEAVES)["submission truncate-accuracy"]
    for form in ("-o", "--output"):
        ctx = truncate.make_context("truncate-accuracy", ["--input", ".", "--submitter", "x", form, "copy"])
        assert str(ctx.params["output"]) == "copy"


def test_serve_node_model_name_is_serve_llms_spelling_and_the_old_one_still_parses():
    node = dict(LEAVES)["serve node"]
    shown = {o for p in node.params if not getattr(p, "hidden", False) for o in p.opts}
    assert "--model-name" in shown and "--model" not in shown
    assert "--model-name" in {o for p in dict(LEAVES)["serve llm"].params for o in p.opts}
    assert node.make_context("node", ["--model", "m"]).params["model_alias"] == "m"
    assert node.make_context("node", ["--model-name", "m"]).params["model"] == "m"
