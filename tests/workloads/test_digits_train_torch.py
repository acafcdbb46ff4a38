"""digits_train's PyTorch backend, single process and DistributedDataParallel under torchrun (gloo)."""

from __future__ import annotations

import pytest

from proctor.mllog_lines import iter_log
from proctor.training.compliance import check_file
from proctor.training.seeds import check_seeds
from proctor.workloads.digits_train import QUALITY_TARGET
from proctor.workloads.digits_train.train import train_run

torch = pytest.importorskip("torch")


def _evals(path):
    return [
        (r.metadata["samples_count"], r.value)
        for r in iter_log(path)
        if getattr(r, "key", None) == "eval_accuracy"
    ]


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    return train_run(
        tmp_path_factory.mktemp("single") / "result_0.txt", seed=5, batch_size=64, backend="torch"
    )


def test_torch_run_converges_and_complies(single):
    assert single.status == "success" and single.accuracy >= QUALITY_TARGET and single.world_size == 1
    rep = check_file(single.path)
    assert rep.valid, [f.message for f in rep.findings]


@pytest.mark.slow
def test_ddp_two_ranks_is_the_same_run_logged_once(single, tmp_path):
    """Two gloo ranks each train on half of every global batch; DDP averages the gradients, so the run
    is the single-process run: same evaluations, same samples to converge. Only rank 0 writes."""
    if not torch.distributed.is_available():
        pytest.skip("torch.distributed is not available")
    from proctor.workloads.digits_train.distributed import run_distributed

    path = tmp_path / "result_0.txt"
    line = run_distributed(path, seed=5, nproc=2, batch_size=64, timeout_s=300)
    assert "world_size=2" in line and line.startswith("success")
    got, want = _evals(path), _evals(single.path)
    assert [s for s, _ in got] == [s for s, _ in want]
    assert [v for _, v in got] == pytest.approx([v for _, v in want], abs=1 / 360 + 1e-9)
    keys = [r.key for r in iter_log(path) if hasattr(r, "key")]
    assert keys.count("run_start") == 1 and keys.count("seed") == 1 and keys.count("run_stop") == 1
    assert [r.value for r in iter_log(path) if getattr(r, "key", None) == "micro_batch_size"] == [32]
    assert check_file(path).valid
    assert not [f for f in check_seeds(tmp_path) if f.failed]
