"""digits_train reaches the training checkers by entry point only: the same verdict in any process.

`proctor training train` writes a package; a fresh interpreter that imported nothing else (the
library), and the CLI with no option, both find the benchmark's tables, N and RCPs; looking it up
changes no ruleset object; the demo's training folder passes the check commands the demo prints.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from proctor import entry_points
from proctor.errors import ConfigError
from proctor.training import benchmarks
from proctor.training.benchmarks import GROUP, TrainingBenchmark
from proctor.training.compliance import check_file, get_ruleset, ruleset_with
from proctor.workloads.digits_train import BENCHMARK, RUNS_PER_SUBMISSION
from proctor.workloads.digits_train.spec import training_benchmark

SRC = Path(__file__).resolve().parents[2] / "src"
SYSTEM = "local-cpu"
pytestmark = pytest.mark.slow


ENV = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}  # this checkout


def fresh(code: str, *, env: dict[str, str] = ENV) -> subprocess.CompletedProcess[str]:
    """`python -c code` in a new interpreter (nothing imported or registered before)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env, check=False
    )


def proctor(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The CLI in a new interpreter, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "proctor", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env=ENV,
        check=False,
    )


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """N runs by `proctor training train` (BS 128, the fastest to converge) in a package layout."""
    from proctor.app.demo import system_description

    root = tmp_path_factory.mktemp("pkg")
    bdir = root / "results" / SYSTEM / BENCHMARK
    done = proctor("training", "train", bdir, "--batch-size", "128", "--base-seed", "3")
    assert done.returncode == 0, done.stderr
    assert len(list(bdir.glob("result_*.txt"))) == RUNS_PER_SUBMISSION
    (root / "systems").mkdir()
    desc = system_description(division="closed", status="Available on-premise", framework="sklearn")
    (root / "systems" / f"{SYSTEM}.json").write_bytes(orjson.dumps(desc))
    return root


def test_library_in_a_fresh_process_says_valid(package: Path) -> None:
    bdir = package / "results" / SYSTEM / BENCHMARK
    code = (
        "import sys, proctor\n"
        "from proctor.training.rcp import check_rcp\n"
        "from proctor.training.package import check_package\n"
        f"r = proctor.check_log({str(bdir / 'result_0.txt')!r})\n"
        "print(r.valid, r.benchmark, [f.rule for f in r.errors])\n"
        f"c = check_rcp({str(bdir)!r}, '6.1.0')\n"
        "print(c.passed, c.rcp, c.rcp_name)\n"
        f"p = check_package({str(package)!r}, '6.1.0')\n"
        "print(p.valid, len(p.checked), sorted({f.rule for f in p.findings if f.failed}))\n"
        "print('proctor.workloads.digits_train.train' in sys.modules)\n"
    )
    out = fresh(code)
    assert out.returncode == 0, out.stderr
    log, rcp, pkg, trainer = out.stdout.splitlines()
    assert log == "True digits_train []"
    assert rcp == "True found digits_train_ref_128"  # the shipped RCPs, named by the entry point alone
    assert pkg == "True 1 []"
    assert trainer == "False"  # the declaration module is light: the trainer is never imported


def test_cli_with_no_option_gives_the_same_verdicts(package: Path) -> None:
    bdir = package / "results" / SYSTEM / BENCHMARK
    log = proctor("training", "check-log", bdir / "result_0.txt", "--json")
    assert log.returncode == 0, log.stdout + log.stderr
    assert orjson.loads(log.stdout)["valid"] is True
    rcp = proctor("training", "check-rcp", bdir, "--json")
    assert rcp.returncode == 0, rcp.stdout + rcp.stderr
    assert (orjson.loads(rcp.stdout)["rcp"], orjson.loads(rcp.stdout)["passed"]) == ("found", True)
    pkg = proctor("training", "check-package", package, "--json")
    assert pkg.returncode == 0, pkg.stdout + pkg.stderr
    assert orjson.loads(pkg.stdout)["valid"] is True


def test_an_uninstalled_checkout_finds_the_entry_in_pyproject(package: Path) -> None:
    """No entry-point metadata at all (PYTHONPATH=src, never installed): pyproject.toml is read."""
    log = package / "results" / SYSTEM / BENCHMARK / "result_1.txt"
    code = (
        "import importlib.metadata as m\n"
        "m.entry_points = lambda **kw: []\n"
        "import proctor\n"
        f"print(proctor.check_log({str(log)!r}).valid)\n"
    )
    out = fresh(code, env={**os.environ, "PYTHONPATH": str(SRC)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"


def test_a_lookup_changes_no_ruleset_object(package: Path) -> None:
    official = get_ruleset("6.1.0")
    configs, names, extra = dict(official.configs), official.benchmarks, official.extra_benchmarks
    assert f"closed_{BENCHMARK}" not in configs and extra == frozenset()
    assert check_file(package / "results" / SYSTEM / BENCHMARK / "result_2.txt").valid
    seen = ruleset_with("6.1.0")
    assert (
        seen is not official
        and f"closed_{BENCHMARK}" in seen.configs
        and BENCHMARK in seen.allowed_benchmarks()
    )
    after = get_ruleset("6.1.0")
    assert after is official
    assert after.configs == configs and after.configs.keys() == configs.keys()
    assert (after.benchmarks, after.extra_benchmarks) == (names, frozenset())
    assert BENCHMARK not in after.allowed_benchmarks()
    # told explicitly that there is no extra benchmark, the checker does not know digits_train
    rep = check_file(package / "results" / SYSTEM / BENCHMARK / "result_2.txt", extra_benchmarks=[])
    assert "no_rules" in {f.rule for f in rep.errors}


def test_the_declaration_is_for_6_1_0_only_and_names_its_rcps() -> None:
    declared = training_benchmark("6.1.0")
    assert declared is not None and declared.name == BENCHMARK
    assert declared.runs_required == RUNS_PER_SUBMISSION and Path(declared.rcps or "").is_file()
    assert set(declared.tables) == {"closed", "open"}
    assert training_benchmark("5.1.0") is None
    assert set(benchmarks.registered("6.1.0")) == {BENCHMARK}
    assert benchmarks.registered("5.1.0") == {}
    assert (
        entry_points.registered(GROUP)[BENCHMARK] == "proctor.workloads.digits_train.spec:training_benchmark"
    )


def test_a_broken_or_clashing_declaration_is_one_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    declared = training_benchmark("6.1.0")
    assert declared is not None
    with pytest.raises(ValueError, match="not 'closed_digits_x'"):
        TrainingBenchmark("digits_x", {"closed": declared.tables["closed"]}, 5)
    with pytest.raises(ValueError, match="positive integer"):
        TrainingBenchmark(BENCHMARK, declared.tables, 0)
    with pytest.raises(ConfigError, match="official benchmark"):
        benchmarks.resolve("6.1.0", [TrainingBenchmark("llama31_8b", {}, 3)])
    with pytest.raises(ConfigError, match="twice"):
        benchmarks.resolve("6.1.0", [TrainingBenchmark("a_b", {}, 3), TrainingBenchmark("a_b", {}, 4)])
    monkeypatch.setattr(entry_points, "registered", lambda group: {"nope": "proctor.no_such_module:f"})
    with pytest.raises(ConfigError, match="'nope'.*cannot be loaded"):
        benchmarks.registered("6.1.0")
    monkeypatch.setattr(
        entry_points,
        "registered",
        lambda group: {"other": "proctor.workloads.digits_train.spec:training_benchmark"},
    )
    with pytest.raises(ConfigError, match="name the entry point after it"):
        benchmarks.registered("6.1.0")


@pytest.fixture(scope="module")
def demo_training(tmp_path_factory: pytest.TempPathFactory):
    """Only the demo's training part, with the benchmark's own N."""
    from proctor.app.demo import DemoOptions, run_demo

    out = tmp_path_factory.mktemp("demo") / "out"
    return run_demo(DemoOptions(output=out, quick=True, inference=False))


def test_the_demo_prints_check_commands_that_pass_with_no_option(demo_training) -> None:
    from proctor.app.demo import output_paths

    commands = demo_training.check_commands
    assert [c.split()[:3] for c in commands] == [
        ["proctor", "training", "check-log"],
        ["proctor", "training", "check-rcp"],
        ["proctor", "training", "check-package"],
    ]
    assert not any("--" in c for c in commands)  # no flag: the entry point says everything
    assert [("check", c) for c in commands] == [p for p in output_paths(demo_training) if p[0] == "check"]
    training_rows = [r for r in demo_training.rows if r.part == "training"]
    assert training_rows and all(r.valid for r in training_rows), [r.why for r in training_rows]
    for command in commands:
        line = f"{shlex.quote(sys.executable)} -m {command}"  # `proctor` as the console script runs it
        done = subprocess.run(
            ["bash", "-c", line], capture_output=True, text=True, timeout=300, env=ENV, check=False
        )
        assert done.returncode == 0, (command, done.stdout, done.stderr)
        assert "INVALID" not in done.stdout and "FAIL" not in done.stdout, done.stdout
