"""Inferred edge results: the rules' examples and the real SingleStream log."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.checks.inferred import (
    infer,
    multistream_from_singlestream_ms,
    offline_from_multistream,
    offline_from_singlestream,
)
from proctor.loadgen.logs import read_detail
from proctor.rules.inference import Category

SS_LOG = (
    Path(__file__).resolve().parents[3] / "shared/corpus/inference/v4.1/UntetherAI/h13_u2_preview/"
    "resnet50/singlestream/mlperf_log_detail.txt"
)


def test_rules_examples() -> None:
    # "if the single stream 99%th percentile latency is 25ms, the inferred multistream result is 200ms"
    assert multistream_from_singlestream_ms(25) == 200
    # "if the multistream result is 200ms, the inferred offline result is 40 img/s"
    assert offline_from_multistream(200) == 40
    # "if the single stream result is 25ms, the inferred offline result is 40 img/s"
    assert offline_from_singlestream(25) == 40
    with pytest.raises(ValueError):
        offline_from_singlestream(0)


def test_infer_from_a_real_singlestream_log() -> None:
    if not SS_LOG.is_file():
        pytest.skip("corpus not available")
    log = read_detail(SS_LOG)
    ms = infer(Category.MULTI_STREAM, Category.SINGLE_STREAM, log.values)
    # 8 x the 99th percentile LoadGen reports: its early-stopping estimate (125569 ns, the summary's
    # "Early stopping 99th percentile estimate"), not the raw 99th percentile (125469 ns)
    assert ms.units == "ms" and ms.value == pytest.approx(8 * 125569 / 1e6)
    off = infer(Category.OFFLINE, Category.SINGLE_STREAM, log.values)
    assert off.value == pytest.approx(1000 / (118151 / 1e6))
    # 1000 / mean latency is LoadGen's own "QPS w/o loadgen overhead" (8463.75), up to the log's rounding
    assert off.value == pytest.approx(log.get("result_qps_without_loadgen_overhead"), rel=1e-4)
    with pytest.raises(ValueError, match="do not allow"):
        infer(Category.SINGLE_STREAM, Category.OFFLINE, log.values)


@pytest.mark.parametrize(
    ("estimate_ns", "raw_p99_ns", "expected_ms"),
    [(7_836_918, 7_826_359, 62.695344), (125_569, 125_469, 1.004552), (20_000_000, 30_000_000, 160.0)],
)
def test_multistream_from_singlestream_reads_the_early_stopping_estimate(
    estimate_ns: int, raw_p99_ns: int, expected_ms: float
) -> None:
    """A published v5.1 result (7,836,918 ns estimate, 7,826,359 ns raw): the official v5.1.1 checker
    reports 62.695344 ms; the raw percentile never enters, even where it is the larger."""
    values = {"early_stopping_latency_ms": estimate_ns, "result_99.00_percentile_latency_ns": raw_p99_ns}
    res = infer(Category.MULTI_STREAM, Category.SINGLE_STREAM, values)
    assert res.value == pytest.approx(expected_ms, rel=1e-9)
    assert "early-stopping" in res.formula


@pytest.mark.parametrize("values", [{"early_stopping_latency_ms": 0}, {"result_99.00_percentile_latency_ns": 125_469}])
def test_multistream_without_an_early_stopping_estimate_cannot_be_inferred(values: dict[str, int]) -> None:
    """LoadGen logs 0 when too few queries ran for the estimate (the official says "Not enough samples
    were processed for early stopping"); a log without the key has nothing to infer from."""
    with pytest.raises((ValueError, KeyError)):
        infer(Category.MULTI_STREAM, Category.SINGLE_STREAM, values)
