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
    assert ms.units == "ms" and ms.value == pytest.approx(8 * 125469 / 1e6)
    off = infer(Category.OFFLINE, Category.SINGLE_STREAM, log.values)
    assert off.value == pytest.approx(1000 / (118151 / 1e6))
    # 1000 / mean latency is LoadGen's own "QPS w/o loadgen overhead" (8463.75), up to the log's rounding
    assert off.value == pytest.approx(log.get("result_qps_without_loadgen_overhead"), rel=1e-4)
    with pytest.raises(ValueError, match="do not allow"):
        infer(Category.SINGLE_STREAM, Category.OFFLINE, log.values)
