"""The compliance engine on hand-made logs: findings name key, line, value, constraint and rule."""

from __future__ import annotations

import math
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from proctor.cli.apps import app
from proctor.rules.training.types import Cadence, Check, KeyRule, Req
from proctor.training.benchmarks import TrainingBenchmark
from proctor.training.compliance import check_file, target_reached
from tests.support import synthetic_logs as sl


def _write(tmp_path: Path, events, name="result_0.txt", prefix=""):
    return sl.write_log(tmp_path / name, events, prefix=prefix)


@pytest.mark.parametrize("bench", sl.BENCHMARKS_6_1_0)
def test_valid_logs_pass(bench: str, tmp_path: Path) -> None:
    for division in ("closed", "open"):
        r = check_file(_write(tmp_path, sl.valid_events(bench, division)))
        assert r.valid, [f.message for f in r.findings]
        assert (r.benchmark, r.division, r.ruleset) == (bench, division, "6.1.0")


def _errors(tmp_path, events):
    r = check_file(_write(tmp_path, events))
    assert not r.valid
    return [f for f in r.findings if f.failed]


def test_decay_steps_formula(tmp_path: Path) -> None:
    ev = sl.with_value(sl.valid_events("llama31_8b"), "opt_learning_rate_decay_steps", 1_200_000)
    (f,) = _errors(tmp_path, ev)
    assert f.key == "opt_learning_rate_decay_steps" and f.value == 1_200_000
    assert "1_200_000 - s['opt_learning_rate_warmup_steps']" in f.expected
    assert f.line == next(i for i, e in enumerate(ev, 1) if e.key == "opt_learning_rate_decay_steps")
    assert f.source.startswith("§9")


def test_deepseek_learning_rate_scales_with_batch(tmp_path: Path) -> None:
    ev = sl.with_value(sl.valid_events("deepseekv3_671b"), "global_batch_size", 18432)
    ev = sl.with_value(ev, "opt_base_learning_rate", 2.4e-05 * math.sqrt(18432 / 16384))
    keys = {f.key for f in _errors(tmp_path, ev)}
    assert keys == {"eval_accuracy"}  # only the first evaluation point moves with the batch size


def test_qwen_clip_norm_formula(tmp_path: Path) -> None:
    ev = sl.with_value(sl.valid_events("qwen35_397b_grpo"), "opt_gradient_clip_norm", 0.125 * 1.01)
    assert {f.key for f in _errors(tmp_path, ev)} == {"opt_gradient_clip_norm"}


def test_init_time_limit_closed_and_open(tmp_path: Path) -> None:
    over = sl.valid_events("llama31_8b", "closed", init_ms=30 * 60_000.0)
    assert {f.key for f in _errors(tmp_path, over)} == {"init_stop"}
    assert check_file(_write(tmp_path, sl.valid_events("llama31_8b", "open", init_ms=200 * 60_000.0))).valid


def test_disclosure_keys_required_and_checked(tmp_path: Path) -> None:
    ev = sl.without(sl.valid_events("flux1"), "pipeline_parallelism")
    (f,) = _errors(tmp_path, ev)
    assert f.key == "pipeline_parallelism" and "exactly once" in f.message and f.source.startswith("§5")
    ev = sl.with_value(sl.valid_events("flux1"), "context_parallelism", 0)
    assert {f.key for f in _errors(tmp_path, ev)} == {"context_parallelism"}


def test_duplicate_identical_is_warning(tmp_path: Path) -> None:
    r = check_file(_write(tmp_path, sl.duplicated(sl.valid_events("llama31_8b"), "eval_samples")))
    assert r.valid and [f.severity.value for f in r.findings] == ["warning"]


def test_prefixes_unknown_keys_and_bad_lines(tmp_path: Path) -> None:
    ev = sl.valid_events("gpt_oss_20b")
    p = _write(tmp_path, ev, prefix="[1,0]<stdout>: ")
    text = p.read_text().splitlines()
    text.insert(3, "plain framework output")
    text.insert(
        5, ':::MLLOG {"namespace": "", "time_ms": 1, "key": "some_unknown_key", "value": 1, "metadata": {}}'
    )
    assert check_file(_write_text(p, text)).valid
    text.insert(7, ':::MLLOG {"namespace": "", "time_ms": 1, "key": "broken", ')
    r = check_file(_write_text(p, text))
    assert not r.valid
    (f,) = r.findings
    assert f.rule == "parse" and f.line == 8


def _write_text(p: Path, lines: list[str]) -> Path:
    p.write_text("\n".join(lines) + "\n")
    return p


def test_empty_file_and_unknown_benchmark(tmp_path: Path) -> None:
    empty = tmp_path / "e.txt"
    empty.write_text("nothing here\n")
    assert {f.rule for f in check_file(empty).findings} >= {"no_lines"}
    ev = sl.with_value(sl.valid_events("llama31_8b"), "submission_benchmark", "resnet")
    r = check_file(_write(tmp_path, ev))
    assert not r.valid and "no_rules" in {f.rule for f in r.findings}


def test_registered_benchmark(tmp_path: Path) -> None:
    bench = TrainingBenchmark.from_target(
        "digits_unit",
        5,
        Check("v['value'] >= 0.9", lambda s, v, ll: v["value"] >= 0.9),
        cadence=Cadence(lambda g: g, lambda g: g),
        hyperparameters=(
            KeyRule(
                "global_batch_size",
                Req.EXACTLY_ONE,
                checks=(Check("v['value'] == 64", lambda s, v, ll: v["value"] == 64),),
                source="digits table",
            ),
        ),
        source="proctor digits_unit table",
    )
    extra = [bench]
    ev = sl.valid_events("llama31_8b")
    ev = [e for e in ev if e.key not in sl.HYPERPARAMETERS["llama31_8b"] or e.key == "eval_samples"]
    ev = sl.with_value(ev, "submission_benchmark", "digits_unit")
    idx = next(i for i, e in enumerate(ev) if e.key == "eval_samples")
    ev.insert(idx, sl.Event("global_batch_size", 64, {}, ev[idx].time_ms))
    ev.insert(idx, sl.Event("gradient_accumulation_steps", 1, {}, ev[idx].time_ms))
    ev = sl.with_value(ev, "eval_accuracy", 0.95)
    assert check_file(_write(tmp_path, ev), extra_benchmarks=extra).valid
    assert target_reached("6.1.0", "closed", "digits_unit", 0.91, extra_benchmarks=extra) is True
    low = sl.with_value(ev, "eval_accuracy", 0.5)
    assert {f.rule for f in check_file(_write(tmp_path, low), extra_benchmarks=extra).errors} == {
        "target:eval_accuracy"
    }
    # not declared: an unknown benchmark, whatever this process checked before
    assert "no_rules" in {f.rule for f in check_file(_write(tmp_path, ev)).errors}


def test_target_reached_official_tables() -> None:
    assert target_reached("6.1.0", "closed", "llama31_8b", 3.29) is True
    assert target_reached("6.1.0", "closed", "llama31_8b", 3.31) is False
    assert target_reached("6.1.0", "closed", "dlrmv4", 0.75) is True
    assert target_reached("6.1.0", "closed", "nope", 1.0) is None


def test_cli_json_and_exit_status(tmp_path: Path) -> None:
    good = _write(tmp_path, sl.valid_events("flux1"), "result_0.txt")
    bad = _write(tmp_path, sl.with_value(sl.valid_events("flux1"), "opt_adamw_beta_2", 0.96), "result_1.txt")
    runner = CliRunner()
    import proctor.cli.training_checks  # noqa: F401 - registers the commands

    res = runner.invoke(app, ["training", "check-log", "--json", str(good), str(bad)])
    assert res.exit_code == 1
    objs = [orjson.loads(line) for line in res.stdout.splitlines()]
    assert [o["valid"] for o in objs] == [True, False]
    assert objs[1]["benchmark"] == "flux1" and objs[1]["division"] == "closed"
    (f,) = objs[1]["findings"]
    assert f["key"] == "opt_adamw_beta_2" and f["line"] > 0 and "0.96" in f["message"]
    assert runner.invoke(app, ["training", "check-log", str(good)]).exit_code == 0


@pytest.mark.parametrize("ruleset", ["6.0.0", "5.1.0"])
def test_older_rulesets_reject_61_only_benchmarks(ruleset: str, tmp_path: Path) -> None:
    r = check_file(_write(tmp_path, sl.valid_events("qwen35_397b_grpo")), ruleset)
    assert not r.valid and r.ruleset == ruleset


def test_open_missed_target_is_warning(tmp_path: Path) -> None:
    ev = sl.with_value(sl.valid_events("llama31_8b", "open"), "eval_accuracy", 3.29)
    r = check_file(_write(tmp_path, ev))
    assert r.valid
    (f,) = r.findings
    assert f.severity.value == "warning" and f.rule == "target:eval_accuracy" and "Open" in f.message
    closed = sl.with_value(sl.valid_events("llama31_8b", "closed"), "eval_accuracy", 3.5)
    assert {f.rule for f in _errors(tmp_path, closed)} == {"target:eval_accuracy"}
