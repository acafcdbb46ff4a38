"""recompute() refuses numbers no run can log instead of computing early stopping for ever."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

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


_FIELD = st.one_of(st.integers(0, 99).map(lambda n: f"{n:02d}"), st.sampled_from(["7", "000", " 7", "\u0667\u0667", "ab"]))


@settings(max_examples=400)
@given(parts=st.tuples(_FIELD, _FIELD, st.one_of(st.integers(0, 9999).map(lambda n: f"{n:04d}"), _FIELD), _FIELD,
                       _FIELD, _FIELD, st.text("0123456789", min_size=0, max_size=8)),
       sep=st.sampled_from([" ", "  ", "\t", "T"]))
@example(parts=("07", "24", "2024", "07", "37", "50", "326"), sep=" ")
@example(parts=("02", "30", "2024", "07", "37", "50", "326"), sep=" ")
@example(parts=("12", "31", "1999", "23", "59", "60", "999999"), sep=" ")
def test_power_times_read_as_strptime_reads_them(parts, sep):
    """The power window's stamps read without _strptime give strptime's datetime, or its refusal."""
    import datetime as dt
    import importlib

    recompute = importlib.import_module("proctor.loadgen.logs.recompute")  # the module, not its function

    month, day, year, hour, minute, second, fraction = parts
    text = f"{month}-{day}-{year}{sep}{hour}:{minute}:{second}.{fraction}"
    try:
        want: object = dt.datetime.strptime(text, recompute.POWER_FORMAT)
    except ValueError:
        want = ValueError
    try:
        got: object = recompute._power_time(text)
    except ValueError:
        got = ValueError
    assert got == want, text
    try:  # the microsecond count the power window's length is taken from: strptime's, or its refusal
        micros: object = recompute._power_micros(text)
    except ValueError:
        micros = ValueError
    assert micros == (want if want is ValueError else (want - dt.datetime(1, 1, 1)) // dt.timedelta(microseconds=1)
                      + 86400 * 10**6), text  # fmt: skip
