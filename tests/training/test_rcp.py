"""RCP checker: the rules' worked examples (002 §22 S1-S6), the shipped tables, custom RCPs, the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import orjson
import pytest
from typer.testing import CliRunner

from proctor.errors import ConfigError
from proctor.rules.training_rcps import (
    RcpRecord,
    available_rulesets,
    benchmarks_with_rcps,
    load_rcp_file,
    load_rcps,
)
from proctor.training.rcp import RcpPoint, RcpTable, check_rcp, min_acceptable_mean, olympic_mean, prune
from proctor.training.runs import RunInfo, RunSet, read_run_set

from .results_pkg import llama_log, write_run_set

# 002 §22: "Benchmark A requires 5 submission runs" with RCPs at batch sizes 128 and 256.
A128 = [16, 14, 16, 17, 16, 16, 15, 16, 15, 16]
A256 = [20, 21, 21, 20, 22, 22, 21, 21, 20, 20]


def _records() -> list[RcpRecord]:
    return [
        RcpRecord("a_128", "bench_a", 128, np.array(A128, float)),
        RcpRecord("a_256", "bench_a", 256, np.array(A256, float)),
    ]


def _runs(tmp_path: Path, values: list[float], bs: int, failed: tuple[int, ...] = ()) -> RunSet:
    runs = [
        RunInfo(
            path=tmp_path / f"result_{i}.txt",
            benchmark="bench_a",
            batch_size=bs,
            converged=i not in failed,
            status="success" if i not in failed else "aborted",
            samples_to_converge=math.inf if i in failed else v,
        )
        for i, v in enumerate(values)
    ]
    return RunSet(directory=tmp_path, runs=runs)


def _check(tmp_path: Path, values: list[float], bs: int, **kw):
    return check_rcp(_runs(tmp_path, values, bs), "6.1.0", _records(), runs_required=5, **kw)


def test_example_reference_statistics() -> None:
    t = RcpTable("bench_a", _records(), runs_required=5)
    p128, p256 = t.points
    assert p128.mean == pytest.approx(15.75)
    assert p128.stdev == pytest.approx(0.43, abs=0.005)
    assert p128.max_speedup - 1 == pytest.approx(0.0353, abs=0.00005)
    assert p128.min_mean == pytest.approx(15.21, abs=0.005)
    assert p256.mean == pytest.approx(20.75)
    assert p256.stdev == pytest.approx(0.66, abs=0.005)
    assert p256.max_speedup - 1 == pytest.approx(0.0412, abs=0.00005)
    assert p256.min_mean == pytest.approx(19.93, abs=0.005)


def test_s1_passes_with_rcp_found(tmp_path: Path) -> None:
    r = _check(tmp_path, [15, 15, 15, 16, 16], 128)
    assert (r.rcp, r.passed) == ("found", True)
    assert r.submission_mean == pytest.approx(15.3333, abs=1e-4)
    assert r.scaling_factor == pytest.approx(15.75 / (46 / 3))


def test_s2_fails(tmp_path: Path) -> None:
    r = _check(tmp_path, [19, 19, 19, 20, 21], 256)
    assert (r.rcp, r.passed, r.bypassed) == ("found", False, False)
    assert r.submission_mean == pytest.approx(19.3333, abs=1e-4)
    assert r.min_allowed == pytest.approx(19.93, abs=0.005)
    assert any(f.rule == "rcp" and f.failed for f in r.findings)


def test_s2_with_bypass_passes_flagged(tmp_path: Path) -> None:
    r = _check(tmp_path, [19, 19, 19, 20, 21], 256, bypass=True)
    assert (r.passed, r.bypassed) == (True, True)
    assert r.message == "RCP found passed using rcp_bypass"
    assert not any(f.failed for f in r.findings)


def test_s3_interpolates(tmp_path: Path) -> None:
    r = _check(tmp_path, [17, 18, 18, 18, 20], 192)
    assert (r.rcp, r.passed) == ("interpolated", True)
    assert r.rcp_mean == pytest.approx(18.25)
    assert r.max_speedup - 1 == pytest.approx(0.0368, abs=0.00005)
    assert r.submission_mean == 18.0
    t = RcpTable("bench_a", _records(), runs_required=5)
    _, point = t.lookup(192)
    assert point is not None and point.stdev == pytest.approx(0.547, abs=0.0005)


def test_s4_larger_than_every_rcp_is_missing(tmp_path: Path) -> None:
    r = _check(tmp_path, [30, 30, 30, 30, 30], 512)
    assert (r.rcp, r.passed) == ("missing", False)
    assert r.message == "Missing RCP, please submit RCP with BS = 512"


def test_s5_smaller_batch_size_that_meets_smallest_rcp(tmp_path: Path) -> None:
    r = _check(tmp_path, [16, 16, 16, 16, 17], 64)
    assert (r.rcp, r.passed) == ("smaller_batch_size", True)


def test_s6_smaller_batch_size_that_fails_is_missing(tmp_path: Path) -> None:
    r = _check(tmp_path, [14, 14, 14, 15, 15], 64)
    assert (r.rcp, r.passed) == ("missing", False)
    r2 = _check(tmp_path, [14, 14, 14, 15, 15], 64, bypass=True)
    assert (r2.passed, r2.bypassed) == (True, True)


def test_pruning_example_drops_the_slow_middle_point() -> None:
    # 002 §13: 128 -> 10 epochs, 256 -> 20, 512 -> 20: the RCP at 256 is pruned.
    pts = [RcpPoint(128, 10, 1, 9, "a"), RcpPoint(256, 20, 1, 19, "b"), RcpPoint(512, 20, 1, 19, "c")]
    assert [p.batch_size for p in prune(pts)] == [128, 512]
    # points below the fastest one go too
    pts2 = [RcpPoint(64, 12, 1, 11, "z"), *pts]
    assert [p.batch_size for p in prune(pts2)] == [128, 512]


def test_one_non_converged_run_is_dropped_two_fail(tmp_path: Path) -> None:
    one = check_rcp(
        _runs(tmp_path, [15, 15, 16, 16, 0], 128, failed=(4,)), "6.1.0", _records(), runs_required=5
    )
    assert one.passed and one.submission_mean == pytest.approx(15.6666, abs=1e-3)
    two = check_rcp(
        _runs(tmp_path, [15, 15, 16, 0, 0], 128, failed=(3, 4)), "6.1.0", _records(), runs_required=5
    )
    assert (two.rcp, two.passed, two.message) == (
        "insufficient_convergence",
        False,
        "Insufficient convergence",
    )
    # the bypass does not cover a run set that did not converge
    assert not check_rcp(
        _runs(tmp_path, [15, 15, 16, 0, 0], 128, failed=(3, 4)),
        "6.1.0",
        _records(),
        runs_required=5,
        bypass=True,
    ).passed


def test_batch_size_mismatch_fails(tmp_path: Path) -> None:
    rs = _runs(tmp_path, [16, 16, 16, 16, 16], 128)
    rs.runs[2].batch_size = 256
    r = check_rcp(rs, "6.1.0", _records(), runs_required=5)
    assert (r.rcp, r.passed) == ("inconsistent_runs", False)
    assert any(f.rule == "batch_size_consistency" for f in r.findings)


def test_min_acceptable_mean_zero_stdev_is_the_mean() -> None:
    assert min_acceptable_mean(4608.0, 0.0, 4, 1) == 4608.0
    assert olympic_mean([5, 1, 3, 100], 1) == 4.0


def test_shipped_tables_load_for_every_ruleset() -> None:
    assert available_rulesets() == ("4.0.0", "4.1.0", "5.0.0", "5.1.0", "6.0.0", "6.1.0")
    assert "dlrmv4" in benchmarks_with_rcps("6.1.0") and "llama31_405b" not in benchmarks_with_rcps("6.1.0")
    recs = load_rcps("6.1.0", "llama31_8b")
    assert sorted(r.batch_size for r in recs) == [16, 32, 64, 96, 128]
    assert all(len(r.points) == 20 for r in recs)
    # llama2_70b_lora lists "samples to converge"
    assert all(r.points.size == 20 for r in load_rcps("6.1.0", "llama2_70b_lora"))
    with pytest.raises(ConfigError, match="ruleset"):
        load_rcps("9.9.9", "llama31_8b")


@pytest.mark.parametrize(
    ("bench", "bs", "mean", "minimum"),
    [
        ("llama31_8b", 16, 161109.33, 157919.55),
        ("llama31_8b", 32, 178858.67, 173649.76),
        ("llama31_8b", 128, 344746.67, 327042.94),
        ("gpt_oss_20b", 64, 301056, 290308.29),
        ("llama2_70b_lora", 8, 3178.67, 2960.63),
        ("flux1", 512, 7223523.56, 7112400.32),
        ("deepseekv3_671b", 16384, 765952, 736328.45),
        ("dlrmv4", 32768, 112903964.44, 107555508.73),
    ],
)
def test_official_policy_reproduces_reference_values(
    bench: str, bs: int, mean: float, minimum: float
) -> None:
    """Values of the spec §4 (recomputed from the official checker) under the official statistics."""
    t = RcpTable(bench, load_rcps("6.1.0", bench), policy="official")
    p = next(p for p in t.points if p.batch_size == bs)
    assert p.mean == pytest.approx(mean, abs=0.01)
    assert p.min_mean == pytest.approx(minimum, abs=0.01)
    # the rules' trimmed stdev is smaller, so the rules allow less speedup
    r = next(p for p in RcpTable(bench, load_rcps("6.1.0", bench)).points if p.batch_size == bs)
    assert r.mean == p.mean and r.min_mean >= p.min_mean


@pytest.mark.parametrize(
    ("bench", "pruned_bs"), [("gpt_oss_20b", 32), ("llama2_70b_lora", 32), ("flux1", 1024), ("dlrmv4", 16384)]
)
def test_shipped_pruning(bench: str, pruned_bs: int) -> None:
    t = RcpTable(bench, load_rcps("6.1.0", bench))
    assert pruned_bs in [p.batch_size for p in t.points]
    assert pruned_bs not in [p.batch_size for p in t.pruned]
    assert len(t.pruned) == len(t.points) - 1


def test_qwen_zero_stdev_min_is_mean() -> None:
    for p in RcpTable("qwen35_397b_grpo", load_rcps("6.1.0", "qwen35_397b_grpo")).points:
        assert p.min_mean == p.mean


def test_logs_end_to_end_and_scaling_file(tmp_path: Path) -> None:
    d = write_run_set(tmp_path / "llama31_8b", [176128] * 5 + [180224] * 5, [100.0] * 10)
    (d / "scaling.json").write_text('{"scaling_factor": 7}')
    r = check_rcp(d, "6.1.0")
    assert (r.rcp, r.passed, r.batch_size, r.benchmark) == ("found", True, 32, "llama31_8b")
    assert r.submission_mean == pytest.approx((4 * 176128 + 4 * 180224) / 8)
    assert (d / "scaling.json").read_text() == '{"scaling_factor": 7}'  # untouched without set_scaling
    r = check_rcp(d, "6.1.0", set_scaling=True)
    assert orjson.loads((d / "scaling.json").read_bytes())["scaling_factor"] == pytest.approx(
        r.rcp_mean / r.submission_mean
    )
    slow = write_run_set(tmp_path / "slow" / "llama31_8b", [200704] * 10, [100.0] * 10)
    (slow / "scaling.json").write_text('{"scaling_factor": 7}')
    r = check_rcp(slow, "6.1.0", set_scaling=True)
    assert r.passed and r.scaling_factor == 1.0 and not (slow / "scaling.json").exists()


def test_custom_rcps_for_a_proctor_benchmark(tmp_path: Path) -> None:
    rcp = {
        "digits_train_ref_64": {
            "Benchmark": "digits_train",
            "Creator": "proctor",
            "BS": 64,
            "Hyperparams": {},
            "Epochs to converge": [4096, 4096, 4608, 4608, 5120, 5120],
        }
    }
    f = tmp_path / "rcps_digits.json"
    f.write_text(json.dumps(rcp))
    d = tmp_path / "digits_train"
    d.mkdir()
    for i, s in enumerate([4608, 4608, 5120]):
        llama_log(d / f"result_{i}.txt", samples=s, minutes=1.0, gbs=64, benchmark="digits_train", seed=i)
    r = check_rcp(d, "6.1.0", f)
    assert (r.benchmark, r.rcp, r.passed) == ("digits_train", "found", True)
    assert r.rcp_mean == pytest.approx(np.mean([4096, 4608, 4608, 5120]))
    assert r.submission_mean == 4608
    fast = tmp_path / "fast" / "digits_train"
    fast.mkdir(parents=True)
    for i in range(3):
        llama_log(
            fast / f"result_{i}.txt", samples=1024, minutes=1.0, gbs=64, benchmark="digits_train", seed=i
        )
    assert not check_rcp(fast, "6.1.0", f).passed
    # the official tables have no digits_train; its entry point brings its RCPs (BS 64 is pruned)
    assert check_rcp(d, "6.1.0", extra_benchmarks=[]).rcp == "no_rcps"
    assert check_rcp(d, "6.1.0").rcp == "interpolated"


def test_custom_rcp_file_errors_name_file_and_key(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="bad.json"):
        load_rcp_file(bad)
    bad.write_text(json.dumps({"r1": {"Benchmark": "x", "BS": 8}}))
    with pytest.raises(ConfigError, match="r1"):
        load_rcp_file(bad)


def test_run_reader_takes_values_by_key(tmp_path: Path) -> None:
    d = write_run_set(tmp_path / "b", [1000, 2000, 3000], [10.0, 20.0, 30.0], failed=(2,))
    rs = read_run_set(d)
    assert [r.samples_to_converge for r in rs.runs] == [1000, 2000, math.inf]
    assert rs.minutes().tolist() == [10.0, 20.0, 30.0]
    assert rs.converged().tolist() == [True, True, False]
    assert rs.batch_size == 32
    # the train_samples flag is for bert only; other benchmarks keep their unit
    assert [r.samples_to_converge for r in read_run_set(d, unit="train_samples").runs][:2] == [1000, 2000]
    bert = tmp_path / "bert"
    bert.mkdir()
    llama_log(bert / "result_0.txt", samples=500, minutes=1.0, benchmark="bert")
    assert read_run_set(bert, unit="train_samples").runs[0].samples_to_converge == 1_000_000


def _cli():
    from proctor.cli.apps import app
    from proctor.cli.main import _register

    _register()
    return app


def test_cli_check_rcp_json_and_exit_status(tmp_path: Path) -> None:
    good = write_run_set(tmp_path / "good" / "llama31_8b", [178000] * 10, [100.0] * 10)
    res = CliRunner().invoke(_cli(), ["training", "check-rcp", str(good), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert {
        "benchmark",
        "batch_size",
        "rcp",
        "passed",
        "submission_mean",
        "rcp_mean",
        "min_allowed",
        "scaling_factor",
    } <= out.keys()
    assert (out["rcp"], out["passed"], out["submission_mean"]) == ("found", True, 178000)
    bad = write_run_set(tmp_path / "bad" / "llama31_8b", [100000] * 10, [100.0] * 10)
    res = CliRunner().invoke(_cli(), ["training", "check-rcp", str(bad), "--json"])
    assert res.exit_code == 1 and json.loads(res.output)["passed"] is False
    res = CliRunner().invoke(_cli(), ["training", "check-rcp", str(bad), "--rcp-bypass"])
    assert res.exit_code == 0 and "PASS" in res.output
