"""`--json`: stdout is exactly one JSON document for every exit status of every command that takes it
(issue 30 §5): its own document, or `proctor.error` for bad input (2), a failure without a document
(1), a bug (70) and an interruption before a result (130, 143); an interrupted run prints its
partial result (tests/cli/test_stop_signals.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.loadgen import stop_signals
from proctor.schemas import SCHEMAS, validate


def _json_commands() -> list[list[str]]:
    """Every command path that takes --json, found from the command tree itself."""
    import typer

    from proctor.cli.apps import app

    main._register()
    root = typer.main.get_command(app)
    found: list[list[str]] = []

    def walk(cmd, path):
        if hasattr(cmd, "list_commands"):
            ctx = cmd.context_class(cmd)
            for name in cmd.list_commands(ctx):
                walk(cmd.get_command(ctx, name), [*path, name])
        elif any("--json" in getattr(p, "opts", ()) for p in cmd.params):
            found.append(path)

    walk(root, [])
    return found


JSON_COMMANDS = _json_commands()


def one_document(out: str) -> dict:
    doc = json.loads(out)  # one document and nothing else (json.loads refuses trailing text)
    assert isinstance(doc, dict)
    return doc


def test_the_json_commands_are_known():
    names = {" ".join(c) for c in JSON_COMMANDS}
    assert {"run", "audit", "sweep", "demo", "check submission", "summarize", "early-stopping", "bandwidth",
            "training check-log"} <= names, names


@pytest.mark.parametrize("path", JSON_COMMANDS, ids=" ".join)
def test_a_usage_error_is_one_error_document(cli, path):
    r = cli(*path, "--json", "--no-such-option")
    assert r.rc == 2, r.err
    doc = one_document(r.out)
    assert validate(doc, SCHEMAS["proctor.error"]) == [], doc
    assert doc["command"] == "proctor " + " ".join(path) and doc["exit_code"] == 2 and not doc["incomplete"]
    assert "--no-such-option" in doc["error"] and doc["error"] in r.err


BAD_INPUT = [
    ["run", "-s", "Offline", "--target-qps", "0"],
    ["run", "-s", "Offline", "--user-conf", "{tmp}/missing.conf"],
    ["audit", "TEST01", "-s", "Offline", "--target-qps", "1e-300"],
    ["sweep", "--rates", "nan"],
    ["demo", "--training-runs", "1"],
    ["early-stopping", "-p", "200", "-n", "10"],
    ["bandwidth", "nosuch", "--throughput", "1", "--dtype-size", "1"],
    ["summarize", "{tmp}/nonexistent"],
    ["check", "submission", "/nonexistent"],
    ["training", "check-log", "{tmp}/nonexistent.txt"],
    ["training", "check-seeds", "{tmp}/nonexistent"],
    ["training", "check-rcp", "{tmp}/nonexistent"],
    ["training", "score", "{tmp}/nonexistent"],
    ["training", "check-package", "{tmp}/nonexistent"],
    ["training", "summarize", "{tmp}/nonexistent"],
]


@pytest.mark.parametrize("args", BAD_INPUT, ids=lambda a: " ".join(a[:2]))
def test_bad_input_prints_one_error_document(cli, tmp_path, args):
    r = cli(*[a.format(tmp=tmp_path) for a in args], "--json")
    assert r.rc == 2, r.out + r.err
    doc = one_document(r.out)
    assert validate(doc, SCHEMAS["proctor.error"]) == [] and doc["exit_code"] == 2
    assert doc["error"] and doc["error"] in " ".join(r.err.split())


# (command, the function it does its work in): an interruption or a bug is raised from there
WORK = [
    (["check", "submission"], "proctor.checks.submission", "check_submission"),
    (["summarize"], "proctor.checks.summarize", "summarize"),
    (["training", "check-seeds"], "proctor.training.seeds", "check_seeds"),
]


@pytest.mark.parametrize(
    ("exc", "status"),
    [(KeyboardInterrupt(), 130), (stop_signals.Stopped(15), 143), (stop_signals.Stopped(1), 129), (RuntimeError("bug"), 70)],
    ids=["ctrl-c", "sigterm", "sighup", "bug"],
)
@pytest.mark.parametrize(("path", "module", "function"), WORK, ids=lambda w: " ".join(w) if isinstance(w, list) else "")
def test_an_interruption_or_a_bug_before_a_result_is_one_document(
    cli, monkeypatch, tmp_path, exc, status, path, module, function
):
    import importlib

    def boom(*args, **kwargs):
        raise exc

    monkeypatch.setattr(importlib.import_module(module), function, boom)
    folder = tmp_path / "tree"
    folder.mkdir()
    (folder / "result_0.txt").write_text(":::MLLOG {}\n")
    r = cli(*path, folder, "--json")
    assert r.rc == status, r.out + r.err
    doc = one_document(r.out)
    assert validate(doc, SCHEMAS["proctor.error"]) == [] and doc["exit_code"] == status
    assert doc["incomplete"] is (status != 70)
    assert ("internal error" in doc["error"]) is (status == 70)


def test_exit_0_prints_only_the_commands_own_document(cli):
    r = cli("early-stopping", "-p", "90", "-n", "10000", "--json")
    assert r.rc == 0 and one_document(r.out)["min_queries"] == 64
    r = cli("bandwidth", "resnet50", "--throughput", "1000", "--dtype-size", "1", "--json")
    assert r.rc == 0 and "kind" not in one_document(r.out)


def test_a_sweep_prints_its_document(cli, tmp_path: Path):
    out = tmp_path / "sweep"
    r = cli("sweep", "--rates", "50", "--sut", "synthetic:service_us=0,workers=0", "--duration-ms", "0",
            "--min-queries", "20", "--no-trace", "--no-report", "-o", out, "--json")
    assert r.rc in (0, 1), r.err
    doc = one_document(r.out)
    assert doc["exit_code"] == r.rc and doc["incomplete"] is False and len(doc["points"]) == 1
    assert json.loads((out / "sweep.json").read_text())["points"] == doc["points"]


def test_without_json_nothing_is_added(cli, tmp_path):
    r = cli("check", "submission", "/nonexistent")
    assert r.rc == 2 and r.out == ""
