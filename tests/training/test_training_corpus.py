"""Real public training logs (shared/corpus/training) check as the official checker checks them."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.training.compliance import check_file
from proctor.training.logparse import read_log

from .official_oracle import official_verdict

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "training"
FILES = sorted(CORPUS.glob("v*/*/*/*/result_*.txt"))
ROUND_RULESET = {"v4.0": "4.0.0", "v5.1": "5.1.0", "v6.0": "6.0.0", "v6.1": "6.1.0"}

pytestmark = pytest.mark.skipif(not FILES, reason="training corpus not present")


def _ruleset(path: Path) -> str:
    return ROUND_RULESET[path.relative_to(CORPUS).parts[0]]


@pytest.mark.official
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CORPUS)))
def test_same_verdict_as_official(path: Path) -> None:
    rs = _ruleset(path)
    ours = check_file(path, rs)
    assert ours.valid == official_verdict(str(path), rs)
    assert ours.valid, [f.message for f in ours.findings]  # the published logs pass their own round
    # and the current ruleset rejects them (no v6.1 disclosure keys), as the official one does
    now = check_file(path, "6.1.0")
    assert now.valid is False and official_verdict(str(path), "6.1.0") is False
    assert "tensor_parallelism" in {f.key for f in now.findings if f.failed}


def test_read_log_on_corpus() -> None:
    path = next(p for p in FILES if "llama31_8b" in str(p))
    log = read_log(path)
    assert log.benchmark == "llama31_8b" and log.division == "closed" and log.status == "success"
    assert log.evals and all(e.samples_count is not None for e in log.evals)
    assert log.run_stop_ms > log.run_start_ms > log.init_start_ms
    assert isinstance(log.global_batch_size, int) and log.seeds
