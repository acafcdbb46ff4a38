"""Olympic scoring (002 §11): drops, non-converging runs, run counts, scaling, M > N windows, summaries."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from proctor.rules.training.benchmarks import OFFICIAL, olympic_drop, runs_required
from proctor.training.runs import RunInfo, RunSet, read_run_set
from proctor.training.scoring import (
    olympic,
    score_run_set,
    utilization,
    weighted_geometric_mean,
)

from .results_pkg import write_run_set


def _rs(
    tmp_path: Path,
    minutes: list[float],
    bench: str = "llama31_8b",
    failed: tuple[int, ...] = (),
    starts: list[float] | None = None,
) -> RunSet:
    runs = []
    for i, m in enumerate(minutes):
        s = (starts[i] if starts else i) * 1e7
        runs.append(
            RunInfo(
                path=tmp_path / f"result_{i}.txt",
                benchmark=bench,
                batch_size=32,
                run_start_ms=s,
                run_stop_ms=s + m * 60000.0,
                converged=i not in failed,
                status="aborted" if i in failed else "success",
            )
        )
    return RunSet(directory=tmp_path, runs=runs)


def test_olympic_drops_fastest_and_slowest() -> None:
    res = olympic(np.array([5.0, 1.0, 3.0, 4.0, 2.0]), np.ones(5, bool), 1, 1)
    assert res.score == 3.0
    assert sorted(res.dropped.tolist()) == [0, 1]


def test_single_non_converging_run_counts_as_slowest(tmp_path: Path) -> None:
    sc = score_run_set(_rs(tmp_path, [10, 11, 12, 13, 14, 15, 16, 17, 18, 1.0], failed=(9,)))
    # the failed run (fastest clock, but no convergence) is dropped as the slowest; 10 as the fastest
    assert sc.valid and sc.score_minutes == pytest.approx(np.mean([11, 12, 13, 14, 15, 16, 17, 18]))
    assert set(sc.dropped) == {"result_0.txt", "result_9.txt"}


def test_two_non_converging_runs_invalidate(tmp_path: Path) -> None:
    sc = score_run_set(_rs(tmp_path, [10.0] * 10, failed=(3, 4)))
    assert not sc.valid and sc.score_minutes is None
    assert any(f.rule == "non_converged" and f.failed for f in sc.findings)


def test_unet3d_drops_four_each_side(tmp_path: Path) -> None:
    minutes = [float(i + 1) for i in range(40)]
    sc = score_run_set(_rs(tmp_path, minutes, bench="unet3d"))
    assert olympic_drop("unet3d") == 4 and runs_required("unet3d") == 40
    assert sc.score_minutes == pytest.approx(np.mean(minutes[4:36]))
    ok4 = score_run_set(_rs(tmp_path, minutes, bench="unet3d", failed=(0, 1, 2, 3)))
    assert ok4.valid and ok4.score_minutes == pytest.approx(np.mean(minutes[8:40]))
    assert not score_run_set(_rs(tmp_path, minutes, bench="unet3d", failed=(0, 1, 2, 3, 4))).valid


def test_too_few_runs_is_invalid(tmp_path: Path) -> None:
    sc = score_run_set(_rs(tmp_path, [10.0] * 9))
    assert not sc.valid and any(f.rule == "run_count" for f in sc.findings)
    assert score_run_set(_rs(tmp_path, [10.0] * 3), runs_required=3).valid


def test_scaling_json_and_normalization(tmp_path: Path) -> None:
    d = write_run_set(tmp_path / "llama31_8b", [180000] * 10, [float(60 + i) for i in range(10)])
    (d / "scaling.json").write_text('{"scaling_factor": 1.25}')
    sc = score_run_set(read_run_set(d), reference_minutes=200.0)
    base = np.mean([61 + i for i in range(8)])
    assert sc.unscaled_minutes == pytest.approx(base)
    assert sc.score_minutes == pytest.approx(base * 1.25)
    assert sc.normalized == pytest.approx(200.0 / (base * 1.25))
    assert score_run_set(read_run_set(d), apply_scaling=False).score_minutes == pytest.approx(base)


def _window_reference(minutes: list[float], failed: set[int], n: int) -> list[float]:
    """Olympic score of every window of n consecutive runs, written out plainly."""
    out = []
    for w in range(len(minutes) - n + 1):
        win = [math.inf if i in failed else minutes[i] for i in range(w, w + n)]
        if sum(math.isinf(x) for x in win) > 1:
            out.append(math.inf)
            continue
        kept = sorted(win)[1:-1]
        out.append(sum(kept) / len(kept))
    return out


def test_m_greater_than_n_takes_the_median_window(tmp_path: Path) -> None:
    minutes = [30, 12, 14, 11, 19, 13, 15, 16, 12, 17, 14, 40, 18]
    # runs listed out of start order: the window follows the start timestamps
    starts = [5, 0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12]
    ordered = [m for _, m in sorted(zip(starts, minutes, strict=True))]
    ref = _window_reference(ordered, set(), 10)
    assert len(ref) == 4
    sc = score_run_set(_rs(tmp_path, minutes, starts=starts))
    assert sc.score_minutes == pytest.approx(sorted(ref)[1])  # lower median of 4 windows
    assert len(sc.used) == 10 and any(f.rule == "run_window" for f in sc.findings)


def test_m_greater_than_n_invalid_windows_count_as_infinite(tmp_path: Path) -> None:
    minutes = [10.0 + i for i in range(12)]
    failed = {0, 1}  # the first window holds both failures
    ref = _window_reference(minutes, failed, 10)
    assert math.isinf(ref[0]) and not math.isinf(ref[1])
    sc = score_run_set(_rs(tmp_path, minutes, failed=tuple(failed)))
    assert sc.valid and sc.score_minutes == pytest.approx(sorted(ref)[1])
    bad = score_run_set(_rs(tmp_path, minutes, failed=(0, 5, 11)))
    assert not bad.valid  # every window holds two failures


def test_weighted_geometric_mean_and_utilization() -> None:
    assert weighted_geometric_mean([1.0, 4.0]) == pytest.approx(2.0)
    assert weighted_geometric_mean([1.0, 4.0], [3, 1]) == pytest.approx(4**0.25)
    with pytest.raises(ValueError):
        weighted_geometric_mean([0.0, 1.0])
    assert utilization(1e18, 1e15, 2000.0) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        utilization(1.0, 0.0, 1.0)


def test_rules_table_cites_sources() -> None:
    assert runs_required("llama31_8b") == 10 and runs_required("qwen35_397b_grpo") == 3
    assert runs_required("dlrmv4") == 10 and runs_required("deepseekv3_671b") == 3
    assert runs_required("unknown") is None and runs_required("unknown", 4) == 4
    assert all(b.cite["runs_required"].startswith(("002 §", "not in the 002")) for b in OFFICIAL.values())


def _cli():
    from proctor.cli.apps import app
    from proctor.cli.main import _register

    _register()
    return app


def test_cli_score_json(tmp_path: Path) -> None:
    d = write_run_set(
        tmp_path / "acme" / "llama31_8b", [180000] * 10, [float(60 + i) for i in range(10)], failed=(9,)
    )
    res = CliRunner().invoke(
        _cli(),
        [
            "training",
            "score",
            str(d),
            "--json",
            "--reference",
            "llama31_8b=120",
            "--model-flops",
            "6e20",
            "--peak-flops",
            "1e16",
        ],
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    row = out["benchmarks"][0]
    assert {"benchmark", "runs", "dropped", "score_minutes", "valid"} <= row.keys()
    assert row["score_minutes"] == pytest.approx(np.mean([61 + i for i in range(8)]))
    assert row["dropped"] == ["result_0.txt", "result_9.txt"] and row["valid"] is True
    assert row["utilization"] == pytest.approx(6e20 / (1e16 * row["score_minutes"] * 60))
    assert out["weighted_geometric_mean"] == pytest.approx(120 / row["score_minutes"])
    bad = write_run_set(tmp_path / "bad" / "llama31_8b", [180000] * 10, [60.0] * 10, failed=(1, 2))
    assert CliRunner().invoke(_cli(), ["training", "score", str(bad)]).exit_code == 1


@pytest.mark.official
@pytest.mark.parametrize("seed", range(4))
def test_scores_match_official_summarizer(tmp_path: Path, seed: int) -> None:
    rsum = pytest.importorskip("mlperf_logging.result_summarizer.result_summarizer")
    rng = np.random.default_rng(seed)
    minutes = [float(x) for x in rng.uniform(50, 150, 10)]
    failed = tuple(int(i) for i in rng.choice(10, size=seed % 3, replace=False))
    d = write_run_set(tmp_path / "sys" / "llama31_8b", [180000] * 10, minutes, failed=failed)
    if seed % 2:
        (d / "scaling.json").write_text(json.dumps({"scaling_factor": 1.0 + seed / 100}))
    score, _, factor = rsum._compute_strong_score_standalone(
        "llama31_8b", "sys", False, str(d), "training", "6.1.0"
    )
    sc = score_run_set(read_run_set(d))
    assert sc.scaling_factor == factor
    if score is None:
        assert not sc.valid and sc.score_minutes is None
    else:
        assert sc.valid and sc.score_minutes == pytest.approx(score, rel=1e-9)


# 002 §9: "OPEN: ... the reported results must include the geometric mean of the final quality as
# measured by the closed quality measure"
def test_open_result_reports_the_geometric_mean_of_final_quality(tmp_path: Path) -> None:
    d = write_run_set(
        tmp_path / "open", [36864] * 10, [60.0 + i for i in range(10)], division="open", failed=(3,)
    )
    sc = score_run_set(read_run_set(d, ruleset="6.1.0"))
    # nine runs end at 0.9 (open target), the non-converging one at 3.5: all ten are the result's runs
    expected = math.exp((9 * math.log(0.9) + math.log(3.5)) / 10)
    assert sc.valid and sc.division == "open"
    assert sc.final_quality_geomean == pytest.approx(expected, rel=1e-12)
    assert sc.to_dict()["final_quality_geomean"] == pytest.approx(expected, rel=1e-12)


def test_open_result_without_final_quality_is_invalid(tmp_path: Path) -> None:
    d = write_run_set(tmp_path / "open", [36864] * 10, [60.0 + i for i in range(10)], division="open")
    p = d / "result_4.txt"
    p.write_text("".join(x for x in p.read_text().splitlines(True) if '"eval_accuracy"' not in x))
    sc = score_run_set(read_run_set(d, ruleset="6.1.0"))
    assert not sc.valid and sc.final_quality_geomean is None
    (f,) = [f for f in sc.findings if f.rule == "open_final_quality"]
    assert f.failed and f.value == ["result_4.txt"] and f.source and "§9" in f.source
    # Closed results are not held to it (their compliance tables require the quality target)
    c = write_run_set(tmp_path / "closed", [36864] * 10, [60.0 + i for i in range(10)])
    q = c / "result_4.txt"
    q.write_text("".join(x for x in q.read_text().splitlines(True) if '"eval_accuracy"' not in x))
    assert not any(f.rule == "open_final_quality" for f in score_run_set(read_run_set(c)).findings)


def test_summary_lists_open_final_quality(tmp_path: Path) -> None:
    from proctor.training.summarize import summarize

    from .results_pkg import write_package

    root = write_package(
        tmp_path / "pkg", {"sys1": {"llama31_8b": ([36864] * 10, [60.0] * 10)}}, division="open"
    )
    s = summarize([root], "6.1.0")
    assert s.open_final_quality == [
        {"system": "sys1", "benchmark": "llama31_8b", "final_quality_geomean": pytest.approx(0.9, rel=1e-12)}
    ]
    assert s.to_dict()["open_final_quality"] == s.open_final_quality
    closed = write_package(tmp_path / "c", {"sys1": {"llama31_8b": ([36864] * 10, [60.0] * 10)}})
    assert summarize([closed], "6.1.0").open_final_quality == []
