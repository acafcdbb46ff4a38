"""Issue 32 §4-5: the engine's options, a run's outcome, its progress display and the CLI's flags each
have one home; each test fails when the concept is stated a second time."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from proctor.loadgen.engine import RunOutcome
from proctor.loadgen.options import EngineOptions

SRC = Path(__file__).resolve().parents[1] / "src" / "proctor"
LOADGEN = SRC / "loadgen"
FLAG = re.compile(r"--[a-z][a-z0-9-]*")


def _trees(root: Path) -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"), str(p))) for p in sorted(root.rglob("*.py"))]


def _where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(SRC)}:{getattr(node, 'lineno', 0)}"


def _functions(path: Path) -> dict[str, ast.FunctionDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {f"{cls}{n.name}": n for cls, n in _defs(tree)}


def _defs(tree: ast.Module) -> list[tuple[str, ast.FunctionDef]]:
    found: list[tuple[str, ast.FunctionDef]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found.append(("", node))
        elif isinstance(node, ast.ClassDef):
            found += [(f"{node.name}.", n) for n in node.body if isinstance(n, ast.FunctionDef)]
    return found


def _params(fn: ast.FunctionDef) -> set[str]:
    a = fn.args
    return {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)}


OPTION_FIELDS = {f.name for f in dataclasses.fields(EngineOptions)}


@pytest.mark.parametrize(
    ("path", "function"),
    [
        (LOADGEN / "engine.py", "run_test"),
        (LOADGEN / "engine.py", "Run.__init__"),
        (SRC / "compat" / "official_engine.py", "run_official"),
        (SRC / "app" / "session.py", "run"),
        (SRC / "app" / "session.py", "session_runner"),
    ],
)
def test_the_engines_options_are_stated_once(path: Path, function: str) -> None:
    """EngineOptions (loadgen/options.py) is the one statement of the engine's options: the functions
    that run a test take one, never a parameter per option (a keyword replaces a field through
    `dataclasses.replace`, so a second list cannot drift)."""
    restated = sorted(_params(_functions(path)[function]) & OPTION_FIELDS)
    assert restated == [], f"{path.name}:{function} restates EngineOptions fields {restated}"


def test_run_test_is_called_only_by_the_session_and_the_official_api() -> None:
    """A sweep is a session: only app/session.py (every proctor command's run) and compat/
    mlperf_loadgen.py (the official API's StartTest) call the engine; everything else goes through them."""
    callers = sorted(
        _where(p, node)
        for p, tree in _trees(SRC)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) == "run_test" or getattr(node.func, "attr", None) == "run_test")
    )
    assert [c.split(":")[0] for c in callers] == ["app/session.py", "compat/mlperf_loadgen.py"], callers


def test_a_run_outcome_is_immutable() -> None:
    params = RunOutcome.__dataclass_params__  # type: ignore[attr-defined]
    assert params.frozen
    outcome = RunOutcome(result=None, valid=False, incomplete=False, incomplete_reason="", log_paths={},
                         errors=0, warnings=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        outcome.valid = True  # type: ignore[misc]


def test_the_session_appends_nothing_to_a_closed_log() -> None:
    """The session judges a run after the engine closed its logs: what it keeps goes beside them
    (loadgen/logs/verdict.py) or into EngineOptions.detail_records, written before the close."""
    text = (SRC / "app" / "session.py").read_text(encoding="utf-8")
    assert re.findall(r"\bappend_record\b|\bappend_annotations\b", text) == []


def test_no_screen_in_the_engine() -> None:
    """The engine emits progress events (loadgen/progress.py); the CLI draws them (cli/live_progress.py)."""
    hits = sorted(
        _where(p, node)
        for p, tree in _trees(LOADGEN)
        for node in ast.walk(tree)
        if (isinstance(node, ast.Import) and any(a.name.split(".")[0] == "rich" for a in node.names))
        or (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "rich")
    )
    assert hits == []


def test_no_cli_flag_names_as_data_in_the_engine() -> None:
    """A flag the engine holds as a value (a label table, an error's key) is the CLI's to name:
    the engine names its settings; the CLI maps them to its flags (cli/run_options.SETTING_FLAGS).
    (Advice worded in prose, an f-string's text, is not a flag held as a value.)"""
    hits = []
    for p, tree in _trees(LOADGEN):
        prose = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
        hits += [
            f"{_where(p, node)}: {node.value!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
            and FLAG.fullmatch(node.value.strip())
        ]
    assert hits == []


def test_no_benchmark_name_in_the_engine() -> None:
    """The engine knows no benchmark: a name of the rules' table (proctor's `digits` workload included)
    is never a value under loadgen/; the app hands resolve_settings what mlperf.conf lacks."""
    from proctor.rules.inference import BENCHMARKS

    names = {b.name for b in BENCHMARKS}
    hits = sorted(
        f"{_where(p, node)}: {node.value!r}"
        for p, tree in _trees(LOADGEN)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
    )
    assert hits == []


def test_the_cli_names_its_flags_for_the_settings_it_sets() -> None:
    """A refused override names the flag typed on the command line, the setting's name elsewhere."""
    from proctor.app.session import build_settings
    from proctor.cli.run_options import SETTING_FLAGS
    from proctor.errors import ConfigError
    from proctor.loadgen.types import Scenario

    for labels, key in (({}, "target_qps"), (SETTING_FLAGS, "--target-qps")):
        with pytest.raises(ConfigError) as info:
            build_settings(Scenario.SINGLE_STREAM, None, "resnet50", None, target_qps=10.0, labels=labels)
        assert info.value.key == key
        assert ("--expected-latency-ms" in str(info.value)) == bool(labels)
    assert build_settings(Scenario.OFFLINE, None, "digits", None).settings.scenario == Scenario.OFFLINE


def advised_options(trees: list[tuple[Path, ast.Module]]) -> set[str]:
    """The options the engine's advice names through OptionNames: the first argument of each
    `.name("x", ...)`, `.named("x", ...)` or `.labelled("x")` call."""
    return {
        node.args[0].value
        for _, tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("name", "named", "labelled")
        and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
    }


def test_every_option_the_engines_advice_names_has_the_clis_flag() -> None:
    """The engine's verdict and advice name an option through the caller's labels (EngineOptions.labels,
    loadgen/option_names.py): the CLI labels every one it names, so `proctor run` reads the flag to type
    ("lower --target-qps (server_target_qps, now 40)") where a library caller reads the setting."""
    from proctor.cli.run_options import SETTING_FLAGS
    from proctor.loadgen.sut_faults import ADVICE_OPTIONS

    named = advised_options(_trees(LOADGEN)) | set(ADVICE_OPTIONS)
    assert {"target_qps", "expected_latency_ms", "min_query_count", "timeout_s", "concurrency", "debug"} <= named
    assert sorted(named - set(SETTING_FLAGS)) == []
    assert all(FLAG.fullmatch(SETTING_FLAGS[o]) for o in named - {"debug"})
    assert "--debug" in SETTING_FLAGS["debug"]


def test_the_session_hands_the_clis_labels_to_the_engine() -> None:
    """`proctor run`, `sweep` and `audit` build their request with the CLI's labels, and the session's
    EngineOptions carries them (the engine's advice then names the flags typed)."""
    from proctor.app.session import RunRequest
    from proctor.cli.run_options import SETTING_FLAGS
    from proctor.loadgen.types import Scenario

    options = RunRequest(Scenario.SERVER, option_names=SETTING_FLAGS).options("")
    assert options.labels == SETTING_FLAGS
    assert RunRequest(Scenario.SERVER).options("").labels == {}  # a library request: the settings' own names
    audit = (SRC / "cli" / "audit.py").read_text(encoding="utf-8")
    assert "labels=request.option_names" in audit
