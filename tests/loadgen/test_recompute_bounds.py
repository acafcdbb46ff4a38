"""recompute() refuses numbers no run can log instead of computing early stopping for ever."""

from __future__ import annotations

import pytest

from proctor.errors import LogFormatError
from proctor.loadgen.logs.reader import DetailLogData
from proctor.loadgen.logs.recompute import check_ranges, recompute


def _log(**values):
    base = {
        "effective_scenario": "SingleStream",
        "result_query_count": 1000,
        "effective_min_duration_ms": 10,
        "effective_target_latency_percentile": 0.9,
    }
    base.update(values)
    return DetailLogData(path="mlperf_log_detail.txt", values=base)


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"effective_target_latency_percentile": 0.9999999}, "outside"),
        ({"effective_target_latency_percentile": "x"}, "outside"),
        ({"result_query_count": 10**15}, "result_query_count"),
        ({"result_query_count": -1}, "result_query_count"),
        ({"effective_scenario": "Server", "result_overlatency_query_count": 2000}, "more over-latency"),
    ],
)
def test_out_of_range_numbers_are_a_format_error(values, words):
    with pytest.raises(LogFormatError, match=words):
        recompute(_log(**values))


def test_ordinary_numbers_pass():
    check_ranges(_log())
    assert recompute(_log()).min_queries_for_es > 0
