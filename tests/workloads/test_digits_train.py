"""digits_train: the split, the training loop under the harness, its log, its compliance, the RCPs."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import orjson
import pytest

from proctor.mllog_lines import iter_log
from proctor.training.compliance import check_file
from proctor.workloads.digits_train import (
    BENCHMARK,
    EVAL_EVERY_SAMPLES,
    QUALITY_TARGET,
    RCP_BATCH_SIZES,
    RUNS_PER_SUBMISSION,
)
from proctor.workloads.digits_train.data import BatchOrder, load_split
from proctor.workloads.digits_train.reference_rcps import record_name
from proctor.workloads.digits_train.spec import eval_interval, shipped_path
from proctor.workloads.digits_train.train import run_seeds, train_run


def records(path: Path) -> list:
    return [r for r in iter_log(path) if hasattr(r, "key")]


def values(path: Path, key: str) -> list:
    return [r.value for r in records(path) if r.key == key]


@pytest.fixture(scope="module")
def converged(tmp_path_factory: pytest.TempPathFactory):
    """One full run at the largest RCP batch size (the fastest to converge on a CPU)."""
    path = tmp_path_factory.mktemp("conv") / "result_0.txt"
    return train_run(path, seed=11, batch_size=128)


def test_split_is_fixed_and_stratified():
    s = load_split()
    assert s.x_train.shape == (1437, 64) and s.x_eval.shape == (360, 64)
    assert s.x_train.dtype == np.float32 and s.x_train.min() >= 0.0 and s.x_train.max() <= 1.0
    assert np.bincount(s.y_eval, minlength=10).min() >= 35  # 36 per class, +-1 for rounding
    again = load_split.__wrapped__()
    assert np.array_equal(again.y_eval, s.y_eval) and np.array_equal(again.x_train, s.x_train)


def test_batch_order_is_seeded_and_covers_each_epoch():
    a, b = BatchOrder(100, 30, seed=5), BatchOrder(100, 30, seed=5)
    first = [a.next() for _ in range(3)]
    assert all(np.array_equal(x, b.next()) for x in first)
    assert len(np.unique(np.concatenate(first))) == 90  # one epoch: no index twice, no partial batch
    a.next()
    assert a.epoch == 1
    c = BatchOrder(100, 30, seed=6)
    assert not np.array_equal(c.next(), first[0])
    with pytest.raises(ValueError):
        BatchOrder(10, 11, seed=0)


def test_seeds_are_distinct_and_reproducible():
    s = run_seeds(12, 3)
    assert len(set(s)) == 12 and s == run_seeds(12, 3) and s != run_seeds(12, 4)


def test_cadence_rounds_to_whole_batches():
    assert [eval_interval(b) for b in (32, 64, 96, 128, 1000)] == [512, 512, 576, 512, 1000]


def test_converged_run_logs_a_compliant_result(converged):
    r = converged
    assert r.status == "success" and r.accuracy >= QUALITY_TARGET
    assert r.samples_to_converge is not None and r.samples_to_converge % EVAL_EVERY_SAMPLES == 0
    assert r.samples_to_converge == r.evals * EVAL_EVERY_SAMPLES
    assert max(r.accuracies[:-1]) < QUALITY_TARGET  # it stopped at the first evaluation on target
    path = r.path
    counts = {}
    for rec in records(path):
        counts[rec.key] = counts.get(rec.key, 0) + 1
    for key in ("seed", "run_start", "run_stop", "init_stop", "global_batch_size", "config_filename"):
        assert counts[key] == 1, key
    assert values(path, "seed") == [11] and values(path, "global_batch_size") == [128]
    evals = [rec for rec in records(path) if rec.key == "eval_accuracy"]
    assert [e.metadata["samples_count"] for e in evals] == [512 * (i + 1) for i in range(r.evals)]
    assert [e.value for e in evals] == list(r.accuracies)
    stop = [rec for rec in records(path) if rec.key == "run_stop"][0]
    assert stop.metadata["status"] == "success"
    rep = check_file(path)
    assert rep.valid, [f.message for f in rep.findings]
    assert rep.benchmark == BENCHMARK and rep.division == "closed"


def test_same_seed_same_run(tmp_path, converged):
    again = train_run(None, seed=11, batch_size=128)
    assert again.samples_to_converge == converged.samples_to_converge
    assert again.accuracies == converged.accuracies


def test_a_few_steps_then_abort_is_flagged(tmp_path):
    """A run cut short at the sample budget stops with status aborted and fails the quality target."""
    path = tmp_path / "result_0.txt"
    r = train_run(path, seed=2, batch_size=64, max_samples=1024)
    assert r.status == "aborted" and r.samples_to_converge is None and r.evals == 2
    assert [rec.metadata["status"] for rec in records(path) if rec.key == "run_stop"] == ["aborted"]
    rep = check_file(path)
    assert not rep.valid
    assert {f.key for f in rep.findings if f.failed} == {"eval_accuracy"}


def _mutate(src: Path, dst: Path, key: str, new_value=None, drop: bool = False) -> Path:
    out = []
    for line in src.read_text().splitlines():
        if f'"key": "{key}"' in line:
            if drop:
                continue
            obj = orjson.loads(line.split(":::MLLOG ", 1)[1])
            obj["value"] = new_value
            line = ":::MLLOG " + orjson.dumps(obj).decode()
        out.append(line)
    dst.write_text("\n".join(out) + "\n")
    return dst


def _off_cadence(src: Path, dst: Path) -> Path:
    text = src.read_text()
    first = re.search(r'"key": "eval_accuracy".*?"samples_count": (\d+)', text)
    assert first is not None
    line_start = text.rfind("\n", 0, first.start()) + 1
    line_end = text.index("\n", first.end())
    line = text[line_start:line_end].replace(f'"samples_count": {first.group(1)}', '"samples_count": 600')
    dst.write_text(text[:line_start] + line + text[line_end:])
    return dst


def mutations(src: Path, d: Path) -> dict[str, Path]:
    return {
        "valid": src,
        "lr": _mutate(src, d / "lr.txt", "opt_base_learning_rate", 0.01),
        "optimizer": _mutate(src, d / "opt.txt", "opt_name", "sgd"),
        "no_grad_accum": _mutate(src, d / "ga.txt", "gradient_accumulation_steps", drop=True),
        "no_seed_ok": _mutate(src, d / "seed.txt", "seed", drop=True),  # the seed is the seed checker's
        "gbs_zero": _mutate(src, d / "gbs.txt", "global_batch_size", 0),
        "no_run_stop": _mutate(src, d / "stop.txt", "run_stop", drop=True),
        "bad_precision": _mutate(src, d / "prec.txt", "lowest_numerical_precision_in_linear", "fp7"),
        "off_cadence": _off_cadence(src, d / "cadence.txt"),
    }


def test_mutated_logs_fail_on_the_mutated_key(converged, tmp_path):
    expect = {
        "lr": "opt_base_learning_rate",
        "optimizer": "opt_name",
        "no_grad_accum": "gradient_accumulation_steps",
        "gbs_zero": "global_batch_size",
        "no_run_stop": "run_stop",
        "bad_precision": "lowest_numerical_precision_in_linear",
        "off_cadence": "eval_accuracy",
    }
    for name, path in mutations(converged.path, tmp_path).items():
        rep = check_file(path)
        if name in ("valid", "no_seed_ok"):
            assert rep.valid, (name, [f.message for f in rep.findings])
        else:
            assert not rep.valid, name
            assert expect[name] in {f.key for f in rep.findings if f.failed}, (name, rep.findings)


@pytest.mark.official
def test_official_checker_agrees_with_a_yaml_of_the_same_table(converged, tmp_path, monkeypatch):
    """The official checker, given digits_train's table as YAML, gives proctor's verdict on each log."""
    mlp = pytest.importorskip("mlperf_logging.compliance_checker.mlp_compliance")
    ours = Path(__file__).parent / "data" / "official_closed_digits_train.yaml"
    original = mlp.enqueue_config
    monkeypatch.setattr(
        mlp, "enqueue_config", lambda c: original(str(ours) if c.endswith("closed_digits_train.yaml") else c)
    )
    for name, path in mutations(converged.path, tmp_path).items():
        checker = mlp.make_checker("training", "6.1.0", True, False)
        official = checker.check_file(str(path), "training_6.1.0/common.yaml")
        assert official == check_file(path).valid, name


def test_shipped_rcps_follow_the_official_format_and_the_rules():
    from proctor.rules.training_rcps import load_rcp_file

    raw = orjson.loads(shipped_path().read_bytes())
    assert sorted(raw) == sorted(record_name(b) for b in RCP_BATCH_SIZES)
    recs = load_rcp_file(shipped_path())[BENCHMARK]
    assert [r.batch_size for r in recs] == list(RCP_BATCH_SIZES)
    means = []
    for r in recs:
        assert len(r.points) == 2 * RUNS_PER_SUBMISSION  # the rules: at least 2N per batch size
        assert np.all(r.points % EVAL_EVERY_SAMPLES == 0)
        assert len(np.unique(r.points)) > 2  # real run-to-run variance
        means.append(np.sort(r.points)[1:-1].mean())
    assert means == sorted(means)  # larger batches converge in more samples


def _cli():
    from typer.testing import CliRunner

    from proctor.cli.apps import app
    from proctor.cli.main import _register

    _register()
    return CliRunner(), app


def test_cli_train_writes_a_run_set_that_checks(tmp_path):
    runner, app = _cli()
    res = runner.invoke(
        app,
        [
            "training",
            "train",
            str(tmp_path / "digits_train"),
            "--runs",
            "2",
            "--batch-size",
            "128",
            "--base-seed",
            "3",
        ],
    )
    assert res.exit_code == 0, res.output
    files = sorted((tmp_path / "digits_train").glob("result_*.txt"))
    assert [f.name for f in files] == ["result_0.txt", "result_1.txt"]
    assert values(files[0], "seed") == [run_seeds(2, 3)[0]] and values(files[1], "seed") == [
        run_seeds(2, 3)[1]
    ]
    assert res.output.count("success") == 2
    assert all(check_file(f).valid for f in files)
    res = runner.invoke(app, ["training", "check-log", str(files[0])])
    assert res.exit_code == 0, res.output  # the CLI's own checker knows digits_train


def test_cli_reference_rcps_reproduce_the_shipped_points(tmp_path):
    """The generator with the shipped defaults, cut to its first 3 runs at BS 128, gives the same points."""
    runner, app = _cli()
    out = tmp_path / "rcps.json"
    res = runner.invoke(
        app,
        [
            "training",
            "reference-rcps",
            "--output",
            str(out),
            "--batch-sizes",
            "128",
            "--runs",
            "3",
            "--base-seed",
            "20002",
        ],
    )
    assert res.exit_code == 0, res.output
    rec = orjson.loads(out.read_bytes())[record_name(128)]
    assert rec["BS"] == 128 and rec["Benchmark"] == BENCHMARK and rec["Precision"] == "FP32"
    shipped = orjson.loads(shipped_path().read_bytes())[record_name(128)]["Epochs to converge"]
    assert rec["Epochs to converge"] == shipped[:3]
    assert runner.invoke(app, ["training", "reference-rcps", "--batch-sizes", "0"]).exit_code != 0
