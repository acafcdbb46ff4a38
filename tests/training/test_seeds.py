"""The seed checker on generated run directories, and against the official seed checker."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from proctor.cli.apps import app
from proctor.training.seeds import check_seeds
from tests.support import synthetic_logs as sl


def _runs(tmp_path: Path, seeds: list[list[int]], lineno: int = 42) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    for i, run_seeds in enumerate(seeds):
        ev = sl.without(sl.valid_events("llama31_8b"), "seed")
        for s in run_seeds:
            ev.insert(2, sl.Event("seed", s, {"file": "train.py", "lineno": lineno}, ev[1].time_ms))
        sl.write_log(tmp_path / f"result_{i}.txt", ev)
    return tmp_path


def _rules(findings):
    return sorted((f.rule, f.severity.value) for f in findings)


def test_distinct_seeds_pass(tmp_path: Path) -> None:
    assert check_seeds(_runs(tmp_path, [[1], [2], [3]])) == []


def test_same_seed_same_line_is_error(tmp_path: Path) -> None:
    fs = check_seeds(_runs(tmp_path, [[1], [2], [1]]))
    assert _rules(fs) == [("seeds:duplicate", "error")]
    assert (
        fs[0].path.endswith("result_2.txt")
        and fs[0].value == 1
        and fs[0].extra["first"].endswith("result_0.txt")
    )


def test_missing_and_several_seeds(tmp_path: Path) -> None:
    fs = check_seeds(_runs(tmp_path, [[], [5, 6]]))
    assert _rules(fs) == [("seeds:missing", "error"), ("seeds:several", "warning")]


def test_seed_not_integer_and_not_through_mllog(tmp_path: Path) -> None:
    _runs(tmp_path, [["abc"], [4]])
    p = tmp_path / "result_1.txt"
    ev = [replace(e, metadata={}) if e.key == "seed" else e for e in sl.valid_events("llama31_8b")]
    sl.write_log(p, ev)
    assert _rules(check_seeds(tmp_path)) == [
        ("seeds:not_integer", "error"),
        ("seeds:not_through_mllog", "error"),
    ]


def test_cli(tmp_path: Path) -> None:
    import proctor.cli.training_checks  # noqa: F401

    runner = CliRunner()
    assert (
        runner.invoke(app, ["training", "check-seeds", str(_runs(tmp_path / "a", [[1], [2]]))]).exit_code == 0
    )
    res = runner.invoke(app, ["training", "check-seeds", "--json", str(_runs(tmp_path / "b", [[1], [1]]))])
    assert res.exit_code == 1 and '"seeds:duplicate"' in res.stdout


@pytest.mark.official
@pytest.mark.parametrize("seeds", [[[1], [2], [3]], [[1], [1]], [[], [2]], [[7], [8, 9]]])
def test_same_verdict_as_official(seeds, tmp_path: Path) -> None:
    sc = pytest.importorskip("mlperf_logging.package_checker.seed_checker")
    d = _runs(tmp_path, seeds)
    files = sorted(str(p) for p in d.glob("result_*.txt"))
    official_errors = sc.SeedChecker("6.1.0")._assert_unique_seed_per_run(files)
    ours = [f for f in check_seeds(d) if f.failed]
    assert len(ours) == len(official_errors)
