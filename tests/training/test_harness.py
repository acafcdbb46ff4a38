"""The run harness: a compliant log by default, refusals where the rules say no."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.errors import RunError
from proctor.rules.training.types import Cadence, Check, KeyRule, Req
from proctor.training.benchmarks import TrainingBenchmark
from proctor.training.compliance import available_rulesets, check_file, get_ruleset
from proctor.training.harness import TrainingRun, check_disclosure
from proctor.training.logparse import read_log
from proctor.training.seeds import check_seeds
from tests.support import synthetic_logs as sl

DIGITS = TrainingBenchmark.from_target(
    "digits_harness",
    5,
    Check("v['value'] >= 0.95", lambda s, v, ll: v["value"] >= 0.95),
    cadence=Cadence(lambda g: 4 * g, lambda g: 4 * g, "digits table: every 4 batches"),
    hyperparameters=(
        KeyRule(
            "global_batch_size",
            Req.EXACTLY_ONE,
            checks=(Check("v['value'] in (32, 64)", lambda s, v, ll: v["value"] in (32, 64)),),
            source="digits table",
        ),
        KeyRule(
            "opt_name",
            Req.EXACTLY_ONE,
            checks=(Check("v['value'] == 'sgd'", lambda s, v, ll: v["value"] == "sgd"),),
            source="digits table",
        ),
    ),
    source="proctor digits_harness table",
)
# passed to the checker explicitly: a table for a test's own benchmark is no entry point
EXTRA = [DIGITS]


class FakeClock:
    def __init__(self, t: float = 1_700_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        self.t += 0.5
        return self.t


HP = {
    "global_batch_size": 64,
    "opt_name": "sgd",
    "gradient_accumulation_steps": 1,
    "train_samples": 1500,
    "eval_samples": 297,
    **sl.DISCLOSURE,
}


def _run(path: Path, seed: int = 1, accs=(0.5, 0.9, 0.96, 0.97), clock=None, division="closed") -> list[int]:
    evaluated = []
    with TrainingRun(
        "digits_harness", division, path, seed=seed, spec=DIGITS, rank=0, clock=clock or FakeClock()
    ) as run:
        run.log_hyperparameters(HP)
        run.start()
        samples, it = 0, iter(accs)
        while True:
            samples += 64
            if run.should_eval(samples):
                evaluated.append(samples)
                if run.eval(next(it), samples_count=samples):
                    break
        run.stop("success")
    return evaluated


def test_compliant_log_and_cadence(tmp_path: Path) -> None:
    p = tmp_path / "result_0.txt"
    assert _run(p) == [256, 512, 768]
    r = check_file(p, extra_benchmarks=EXTRA)
    assert r.valid, [f.message for f in r.findings]
    log = read_log(p)
    assert log.status == "success" and log.benchmark == "digits_harness" and log.division == "closed"
    assert [e.samples_count for e in log.evals] == [256, 512, 768] and log.evals[-1].value == 0.96
    assert log.hyperparameters["global_batch_size"] == 64 and len(log.seeds) == 1
    assert log.run_time_ms() > 0 and log.bad_lines == []


def test_seeds_across_runs(tmp_path: Path) -> None:
    for i in range(3):
        _run(tmp_path / f"result_{i}.txt", seed=100 + i)
    assert check_seeds(tmp_path) == []
    _run(tmp_path / "result_3.txt", seed=100)
    assert [f.rule for f in check_seeds(tmp_path)] == ["seeds:duplicate"]


def test_refuses_clock_after_init_limit(tmp_path: Path) -> None:
    clock = FakeClock()
    with TrainingRun(
        "digits_harness", "closed", tmp_path / "r.txt", seed=1, spec=DIGITS, rank=0, clock=clock
    ) as run:
        run.log_hyperparameters(HP)
        clock.t += 30 * 60
        with pytest.raises(RunError, match="30 min closed limit"):
            run.start()
    clock = FakeClock()
    with TrainingRun(
        "digits_harness", "open", tmp_path / "o.txt", seed=1, spec=DIGITS, rank=0, clock=clock
    ) as run:
        run.log_hyperparameters(HP)
        clock.t += 60 * 60
        run.start()  # open allows 4 hours
        run.stop()


def test_disclosure_checked_before_run(tmp_path: Path) -> None:
    assert check_disclosure("tensor_parallelism", 0) is not None
    assert check_disclosure("lowest_numerical_precision_in_attn", "fp7") is not None
    assert check_disclosure("config_filename", "") is not None
    assert check_disclosure("micro_batch_size", 2) is None
    with TrainingRun("digits_harness", "closed", tmp_path / "r.txt", seed=1, spec=DIGITS, rank=0) as run:
        with pytest.raises(ValueError, match="positive integer"):
            run.log_hyperparameters({"pipeline_parallelism": 0})
        with pytest.raises(ValueError, match="already logged"):
            run.log_hyperparameters({"opt_name": "sgd", "opt_name_dup": 1} | {"opt_name": "sgd"})
            run.log_hyperparameters({"opt_name": "sgd"})
        with pytest.raises(RunError, match="require these keys"):
            run.start()


def test_precisions_are_the_rulesets() -> None:
    """mxfp6 is approved from 6.1.0 on (rules §5 Basics); the harness reads the list, no copy."""
    key = "lowest_numerical_precision_in_linear"
    assert check_disclosure(key, "mxfp6", "6.1.0") is None
    why = check_disclosure(key, "mxfp6", "6.0.0")
    assert why is not None and "mxfp6" in why and "nvfp4" in why
    assert check_disclosure(key, "bfloat16", "6.0.0") is None
    assert check_disclosure(key, "fp7") is not None  # the default ruleset (6.1.0)
    assert check_disclosure(key, "anything", "5.1.0") is None  # no disclosure keys before 6.0.0
    assert (
        get_ruleset("6.1.0").precisions[:2] == ("fp64", "fp32") and len(get_ruleset("6.1.0").precisions) == 14
    )


def test_init_limit_is_the_rulesets(tmp_path: Path) -> None:
    assert dict(get_ruleset("4.0.0").init_limit_mins) == {"closed": 30, "open": 240}
    assert all(get_ruleset(v).init_limit_mins == {"closed": 30, "open": 240} for v in available_rulesets())
    with pytest.raises(ValueError, match="division must be one of 'closed', 'open'"):
        TrainingRun("digits_harness", "hybrid", tmp_path / "h.txt", seed=1, rank=0)
    clock = FakeClock()
    with TrainingRun(
        "digits_harness", "open", tmp_path / "o.txt", seed=1, spec=DIGITS, rank=0, clock=clock
    ) as run:
        run.log_hyperparameters(HP)
        clock.t += 240 * 60
        with pytest.raises(RunError, match="240 min open limit"):
            run.start()


def test_rank_nonzero_writes_nothing(tmp_path: Path) -> None:
    p = tmp_path / "r1.txt"
    with TrainingRun("digits_harness", "closed", p, seed=1, spec=DIGITS, rank=1, clock=FakeClock()) as run:
        run.log_hyperparameters(HP)
        run.start()
        run.eval(0.99, samples_count=64)
        run.stop()
    assert not p.exists()


def test_exception_aborts_run(tmp_path: Path) -> None:
    p = tmp_path / "r.txt"
    with (
        pytest.raises(KeyError),
        TrainingRun("digits_harness", "closed", p, seed=1, spec=DIGITS, rank=0) as run,
    ):
        run.log_hyperparameters(HP)
        run.start()
        raise KeyError("boom")
    log = read_log(p)
    assert log.status == "aborted"


def test_official_benchmark_target_and_cadence(tmp_path: Path) -> None:
    hp = dict(sl.HYPERPARAMETERS["qwen35_397b_grpo"]) | sl.DISCLOSURE | {"train_samples": 10}
    p = tmp_path / "q.txt"
    with TrainingRun("qwen35_397b_grpo", "closed", p, seed=3, rank=0, clock=FakeClock()) as run:
        run.log_hyperparameters(hp)
        run.start()
        points, samples = [], 0
        while len(points) < 3:
            samples += 256
            if run.should_eval(samples):
                points.append(samples)
                hit = run.eval(0.5 + 0.1 * len(points), samples_count=samples)
        run.stop()
    assert points == [4608, 4864, 5120] and hit
    rep = check_file(p, extra_benchmarks=EXTRA)
    assert rep.valid, [f.message for f in rep.findings]
