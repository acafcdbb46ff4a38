"""The compat layer's own contract: official names, values and response semantics."""

from __future__ import annotations

import struct

import numpy as np
import orjson
import pytest

import proctor.compat.mlperf_loadgen as lg


def test_enum_values_and_names_match_the_official():
    official = pytest.importorskip("mlperf_loadgen")
    for enum in ("TestScenario", "TestMode", "LoggingMode"):
        theirs = getattr(official, enum).__members__
        mine = getattr(lg, enum).__members__
        assert {k: int(v) for k, v in mine.items()} == {k: int(v) for k, v in theirs.items()}
        assert str(getattr(lg, enum)(1)) == str(getattr(official, enum)(1))


def test_settings_have_the_official_fields_and_defaults():
    official = pytest.importorskip("mlperf_loadgen")
    theirs, mine = official.TestSettings(), lg.TestSettings()
    names = [n for n in dir(theirs) if not n.startswith("_") and n != "FromConfig"]
    assert sorted(names) == sorted(n for n in lg.TestSettings.__slots__ if not n.startswith("_"))
    for n in names:
        a, b = getattr(theirs, n), getattr(mine, n)
        assert (int(a) if n in ("scenario", "mode") else a) == (int(b) if n in ("scenario", "mode") else b), n
    with pytest.raises(AttributeError):
        mine.min_duration = 5  # a typo fails loudly, as on the official binding
    ls = lg.LogSettings()
    assert (ls.log_output.outdir, ls.log_output.prefix, ls.enable_trace, int(ls.log_mode)) == (
        ".",
        "mlperf_log_",
        True,
        0,
    )


def test_response_fields_and_defaults():
    r = lg.QuerySampleResponse(7, 1234, 8, 3)
    assert (r.id, r.data, r.size, r.n_tokens) == (7, 1234, 8, 3)
    r = lg.QuerySampleResponse()
    assert (r.id, r.data, r.size, r.n_tokens) == (0, 0, 0, 0)


def test_bad_handles_are_refused():
    qsl = lg.ConstructQSL(10, 10, lambda s: None, lambda s: None)
    with pytest.raises(ValueError, match="SUT"):
        lg.StartTest(qsl, qsl, lg.TestSettings())


def test_second_settings_object_also_gets_mlperf_conf(tmp_path):
    """Deviation: the official loads mlperf.conf only on the first FromConfig in a process."""
    conf = tmp_path / "user.conf"
    conf.write_text("*.Offline.min_query_count = 300\n")
    for _ in range(2):
        ts = lg.TestSettings()
        assert ts.FromConfig(str(conf), "resnet50", "Offline") == 0
        assert ts.qsl_rng_seed == 2085463073848966840 and ts.min_query_count == 300
    assert lg.TestSettings().FromConfig(str(tmp_path / "missing.conf"), "resnet50", "Offline") < 0


def test_payload_is_read_from_the_address_after_the_callback(tmp_path):
    """Official order: response_cb runs, then `size` bytes at `data` are copied into the accuracy log."""
    bufs: dict[int, np.ndarray] = {}

    def issue(samples):
        responses = []
        for s in samples:
            buf = np.zeros(2, np.int32)
            bufs[s.id] = buf
            responses.append(lg.QuerySampleResponse(s.id, buf.ctypes.data, buf.nbytes))

        def fill(r):  # the harness writes its output in the callback
            bufs[r.id][:] = (s_index[r.id], -1)

        s_index = {s.id: s.index for s in samples}
        lg.QuerySamplesComplete(responses, fill)

    sut = lg.ConstructSUT(issue, lambda: None)
    qsl = lg.ConstructQSL(20, 20, lambda s: None, lambda s: None)
    ts = lg.TestSettings()
    ts.scenario, ts.mode = lg.TestScenario.Offline, lg.TestMode.AccuracyOnly
    ls = lg.LogSettings()
    ls.log_output.outdir, ls.enable_trace = str(tmp_path), False
    lg.StartTestWithLogSettings(sut, qsl, ts, ls, "")
    lg.DestroySUT(sut)
    lg.DestroyQSL(qsl)
    entries = orjson.loads((tmp_path / "mlperf_log_accuracy.json").read_bytes())
    assert len(entries) == 20
    for e in entries:
        assert bytes.fromhex(e["data"]) == struct.pack("<ii", e["qsl_idx"], -1)
    outcome = lg.last_outcome()
    assert outcome is not None and outcome.accuracy_samples == 20 and outcome.errors == 0


def test_an_official_api_harness_is_advised_in_settings_not_flags(tmp_path):
    """A harness on the official API passes no labels (issue 32 item 5): an invalid run's reasons, as
    returned and as logged, name the TestSettings it sets, never a command-line flag of proctor's."""
    import re

    from proctor.loadgen import early_stopping as es
    from proctor.loadgen.logs.reader import read_detail

    sut = lg.ConstructSUT(lambda samples: lg.QuerySamplesComplete([lg.QuerySampleResponse(s.id) for s in samples]),
                          lambda: None)
    qsl = lg.ConstructQSL(64, 64, lambda s: None, lambda s: None)
    ts = lg.TestSettings()
    ts.scenario, ts.mode = lg.TestScenario.SingleStream, lg.TestMode.PerformanceOnly
    ts.min_duration_ms, ts.min_query_count, ts.max_query_count = 60_000, 10, 20  # stops at 20: too short
    ls = lg.LogSettings()
    ls.log_output.outdir, ls.enable_trace = str(tmp_path), False
    try:
        lg.StartTestWithLogSettings(sut, qsl, ts, ls, "")
    finally:
        lg.DestroySUT(sut)
        lg.DestroyQSL(qsl)
    reasons = lg.last_outcome().invalid_reasons
    fixes = [r.rpartition(": ")[2] for r in reasons]
    assert len(reasons) == 2 and reasons[0].startswith("ran ") and "min_duration is 60 s" in reasons[0]
    assert re.fullmatch(r"lower single_stream_expected_latency_ns \d+ or less \(the measured mean latency\): more "
                        r"queries are generated", reasons[0].partition("): ")[2]), reasons[0]
    need = es.min_queries(float(lg.last_outcome().effective.target_latency_percentile))
    assert fixes[1] == (f"min_query_count {need}, or run longer (min_duration) or lower "
                        "single_stream_expected_latency_ns")
    logged = read_detail(tmp_path / "mlperf_log_detail.txt").values["proctor_invalid_reasons"]
    assert logged == reasons
    assert not any(re.search(r"(?<![\w-])--[a-z]", r) for r in reasons), reasons
