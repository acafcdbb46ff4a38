"""The compat API under abuse: twice, unknown, non-integer ids, foreign threads, after the end,
leftovers from an earlier test, huge payloads. Property: no uncaught exception, a clear error in the
detail log, the test still ends and its accuracy log stays valid JSON."""

from __future__ import annotations

import threading

import numpy as np
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

import proctor.compat.mlperf_loadgen as lg
from proctor.loadgen import completion
from proctor.loadgen.logs.reader import read_detail

N = 8
ACTIONS = ("ok", "twice", "unknown", "nonint", "float", "foreign", "notresponse", "notlist", "huge", "late")
BAD_IDS = st.one_of(
    st.text(max_size=20), st.floats(allow_nan=True), st.none(), st.binary(max_size=8),
    st.lists(st.integers(), max_size=3), st.just(10**5000 // 10**4990),
)


def start(tmp_path, issue, mode=lg.TestMode.AccuracyOnly):
    sut = lg.ConstructSUT(issue, lambda: None)
    qsl = lg.ConstructQSL(N, N, lambda s: None, lambda s: None)
    ts = lg.TestSettings()
    ts.scenario, ts.mode = lg.TestScenario.Offline, mode
    ls = lg.LogSettings()
    ls.log_output.outdir, ls.enable_trace = str(tmp_path), False
    try:
        lg.StartTestWithLogSettings(sut, qsl, ts, ls, "")
    finally:
        lg.DestroySUT(sut)
        lg.DestroyQSL(qsl)
    outcome = lg.last_outcome()
    entries = orjson.loads((tmp_path / "mlperf_log_accuracy.json").read_bytes())
    errors = [str(e.value) for e in read_detail(tmp_path / "mlperf_log_detail.txt").errors]
    return outcome, entries, errors


@pytest.fixture(autouse=True)
def _caps():
    lg.set_accuracy_log_caps(64, 1 << 20)
    yield
    lg.set_accuracy_log_caps(1 << 30, 16 << 30)


@pytest.mark.fuzz
@given(actions=st.lists(st.sampled_from(ACTIONS), min_size=1, max_size=6), bad=BAD_IDS)
def test_any_misuse_is_logged_and_the_test_ends(tmp_path_factory, actions, bad):
    tmp_path = tmp_path_factory.mktemp("abuse")
    buf = np.arange(4, dtype=np.int32)
    big = np.zeros(1000, np.uint8)

    def ok(i):
        return lg.QuerySampleResponse(i, buf.ctypes.data, buf.nbytes)

    def issue(samples):
        ids = [s.id for s in samples]
        for a in actions:
            if a == "twice":
                lg.QuerySamplesComplete([ok(ids[0])])
            elif a == "unknown":
                lg.QuerySamplesComplete([ok(ids[-1] + 10**6)])
            elif a == "nonint":
                lg.QuerySamplesComplete([lg.QuerySampleResponse(bad, 0, 0)])
            elif a == "float":
                lg.QuerySamplesComplete([lg.QuerySampleResponse(float(ids[1]), 0, 0)])
            elif a == "notresponse":
                lg.QuerySamplesComplete([bad])
            elif a == "notlist":
                lg.QuerySamplesComplete(bad if bad is not None and not isinstance(bad, list) else 5)
            elif a == "huge":
                lg.QuerySamplesComplete([lg.QuerySampleResponse(ids[2], big.ctypes.data, big.nbytes)])
        rest = [ok(i) for i in ids if not ("huge" in actions and i == ids[2])]  # "twice": ids[0] again
        if "foreign" in actions:
            t = threading.Thread(target=lg.QuerySamplesComplete, args=(rest,))
            t.start()
            t.join()
        else:
            lg.QuerySamplesComplete(rest)

    outcome, entries, errors = start(tmp_path, issue)
    assert not outcome.incomplete  # every sample completed once, whatever else was sent
    bad_actions = [a for a in actions if a not in ("ok", "foreign", "late")]
    assert outcome.errors >= len(set(bad_actions)) if bad_actions else outcome.errors == 0
    assert len(entries) == N - ("huge" in actions)
    assert all("Traceback" not in e for e in errors)
    if "late" in actions:  # after the end: dropped, no exception
        lg.QuerySamplesComplete([ok(0)])


def test_a_non_integer_id_is_named_as_such(tmp_path):
    def issue(samples):
        lg.QuerySamplesComplete([lg.QuerySampleResponse("7", 0, 0)])
        lg.QuerySamplesComplete([lg.QuerySampleResponse(s.id, 0, 0) for s in samples])

    outcome, entries, errors = start(tmp_path, issue)
    assert outcome.errors == 1 and len(entries) == N
    assert "response id '7' is not an integer (a str)" in errors[0]


def test_completions_left_over_from_a_previous_test_do_not_land_in_the_next(tmp_path):
    first: list[int] = []

    def issue_one(samples):
        first.extend(s.id for s in samples)
        lg.QuerySamplesComplete([lg.QuerySampleResponse(s.id, 0, 0) for s in samples])

    start(tmp_path / "one", issue_one)

    def issue_two(samples):
        lg.QuerySamplesComplete([lg.QuerySampleResponse(i, 0, 0) for i in first])  # stale ids
        lg.QuerySamplesComplete([lg.QuerySampleResponse(s.id, 0, 0) for s in samples])

    outcome, entries, errors = start(tmp_path / "two", issue_two)
    assert not outcome.incomplete and len(entries) == N
    assert outcome.errors == N and all("unknown response id" in e for e in errors)


def test_a_huge_payload_is_capped_with_an_error(tmp_path):
    big = np.ones(1000, np.uint8)

    def issue(samples):
        lg.QuerySamplesComplete([lg.QuerySampleResponse(s.id, big.ctypes.data, big.nbytes) for s in samples])

    outcome, entries, errors = start(tmp_path, issue)
    assert entries == [] and not outcome.incomplete
    assert "over the cap of 64 bytes per response" in errors[0]
    assert f"{N} response payload(s) were not written" in errors[-1]


def test_the_total_cap_stops_the_log_growing(tmp_path):
    lg.set_accuracy_log_caps(64, 3 * 16)
    buf = np.ones(16, np.uint8)

    def issue(samples):
        lg.QuerySamplesComplete([lg.QuerySampleResponse(s.id, buf.ctypes.data, buf.nbytes) for s in samples])

    outcome, entries, errors = start(tmp_path, issue)
    assert len(entries) == 3 and "reached its cap of 48 payload bytes in total" in errors[0]


def test_after_the_end_a_completion_is_dropped_quietly():
    before = completion.late_completions
    lg.QuerySamplesComplete([lg.QuerySampleResponse(1, 0, 0)])
    assert completion.late_completions == before + 1
    with pytest.raises(ValueError, match="expected a list"):
        lg.QuerySamplesComplete(5)


def test_caps_must_be_non_negative_integers():
    from proctor.errors import ConfigError

    with pytest.raises(ConfigError):
        lg.set_accuracy_log_caps(-1, 5)
