"""Every numeric setting is range-checked where it is read (issue 30 §4): a conf line (file:line:key),
an option, a field set in code (a ValueError naming it); normalize and the schedule guard the values
a run computes, so no legal value overflows the int64 ns clock, indexes past the QSL or hangs."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from proctor.errors import ConfigError, SettingRangeError
from proctor.loadgen.conf import READS, ConfType, apply_conf, parse_conf
from proctor.loadgen.normalize import normalize
from proctor.loadgen.resolve import Confs, check_settings, resolve_settings, start_settings
from proctor.loadgen.schedule import generate_schedule, loadable_sets
from proctor.loadgen.settings import (
    BOOL_FIELDS,
    INT64_MAX,
    RANGES,
    RUN_ARGUMENT_RANGES,
    EffectiveSettings,
    TestSettings,
    value_problem,
)
from proctor.loadgen.types import Scenario, TestMode

NUMERIC_READS = [r for r in READS if r.kind in ("f64", "u64")]
# Values no numeric key takes, whatever its range (the CLI table uses these: nothing may start).
NEVER_LEGAL = ["nan", "inf", "-inf", "-1", "1e300", "18446744073709551616", "-0.5"]
# The hostile values of the issue, and the edges: each is refused or lands inside the field's range.
HOSTILE = [
    "0", "-1", "1e-300", "1e300", "nan", "inf", "-inf", "9223372036854775808", "18446744073709551615",
    "18446744073709551616", "1.5", "0x7fffffffffffffff", "1e-6", "1e9", "1000000001", "4.9e-324",
    "1e15", "1e16", "100", "101", "0.0", "99.99999",
]


def _line(read, value: str) -> str:
    scenario = read.scenario or "*"
    return f"*.{scenario}.{read.key} = {value}\n"


def _scenario_of(read) -> Scenario:
    return Scenario(read.scenario) if read.scenario else Scenario.OFFLINE


def _conf_types(read) -> list[ConfType]:
    return [ConfType.MLPERF] if read.mlperf_only else [ConfType.MLPERF, ConfType.USER, ConfType.AUDIT]


def test_every_numeric_field_has_a_range():
    numeric = {f.name for f in dataclasses.fields(TestSettings)} - {"scenario", "mode"}
    assert numeric == set(RANGES) | set(BOOL_FIELDS)
    assert set(RANGES).isdisjoint(BOOL_FIELDS)
    for read in READS:  # every key a conf file can set reads into a checked field
        assert read.field in RANGES or read.field in BOOL_FIELDS or read.kind == "mode", read
    for name, rng in {**RANGES, **RUN_ARGUMENT_RANGES}.items():  # each range holds the field's default
        default = getattr(TestSettings(), name, None)
        if default is not None:
            assert value_problem(name, default) == "", name
        assert math.isfinite(rng.low) and math.isfinite(rng.high) and rng.low <= rng.high


def test_the_issue_examples_are_refused_naming_file_line_and_key():
    cases = [
        ("*.Offline.target_qps = 1e-300", Scenario.OFFLINE, "target_qps"),
        ("*.Server.target_qps = 1e-300", Scenario.SERVER, "target_qps"),
        ("*.SingleStream.target_latency = 1e300", Scenario.SINGLE_STREAM, "target_latency"),
        ("*.*.performance_issue_same_index = 18446744073709551616", Scenario.OFFLINE, "performance_issue_same_index"),
    ]
    for text, scen, key in cases:
        with pytest.raises(ConfigError) as info:
            resolve_settings("resnet50", scen, None, Confs(user_conf=f"# c\n{text}\n"))
        err = info.value
        assert (err.file, err.line, err.key) == ("user.conf", 2, key), str(err)
        assert str(err).startswith(f"user.conf:2: key '{key}': ")
        assert "\n" not in str(err)


@pytest.mark.parametrize("read", NUMERIC_READS, ids=lambda r: f"{r.key}:{r.scenario or '*'}:{r.field}")
def test_every_numeric_key_takes_legal_values_only(tmp_path, read):
    """Table: every numeric conf key x hostile value x every file it may stand in. A value is either
    refused with file:line:key (ConfigError, and SettingRangeError when it is a range), or lands in
    the field in range."""
    scen = _scenario_of(read)
    refused = accepted = 0
    for ctype in _conf_types(read):
        for value in HOSTILE:
            text = "*.*.use_token_latencies = 1\n*.*.infer_token_latencies = 1\n" + _line(read, value)
            name = {ConfType.MLPERF: "mlperf.conf", ConfType.USER: "user.conf", ConfType.AUDIT: "audit.config"}[ctype]
            path = tmp_path / name
            path.write_text(text)
            try:
                entries = parse_conf(path, ctype)
                settings = apply_conf(TestSettings(scenario=scen), entries, "resnet50", scen, ctype)
            except ConfigError as exc:
                refused += 1
                assert (exc.file, exc.line, exc.key) == (str(path), 3, read.key), str(exc)
                assert "\n" not in str(exc)
                continue
            accepted += 1
            got = getattr(settings, read.field)
            assert value_problem(read.field, got) == "", (value, got)
    assert refused and accepted  # each key both refuses and takes some of them


@pytest.mark.parametrize("read", NUMERIC_READS, ids=lambda r: f"{r.key}:{r.scenario or '*'}:{r.field}")
def test_mlperf_conf_from_a_tree_is_checked_too(tmp_path, read):
    """An mlperf.conf given as a file (a tree's copy) goes through the same reader and ranges."""
    for k, value in enumerate(("nan", "-1", "1e300")):
        path = tmp_path / f"tree{k}" / "mlperf.conf"
        path.parent.mkdir()
        path.write_text("*.*.use_token_latencies = 1\n" + _line(read, value))
        with pytest.raises(ConfigError) as info:
            resolve_settings("resnet50", _scenario_of(read), None, Confs(mlperf_conf=path), check_model=False)
        assert (info.value.file, info.value.line, info.value.key) == (str(path), 2, read.key)


def test_audit_config_is_checked_where_the_run_starts(tmp_path):
    audit = tmp_path / "audit.config"
    audit.write_text("*.*.mode = 2\n*.*.min_query_count = 1e300\n")
    with pytest.raises(ConfigError) as info:
        start_settings(TestSettings(scenario=Scenario.OFFLINE), audit)
    assert (info.value.file, info.value.line, info.value.key) == (str(audit), 2, "min_query_count")
    audit.write_text("*.*.performance_issue_same = 1\n*.*.performance_issue_same_index = 4096\n")
    started = start_settings(TestSettings(scenario=Scenario.OFFLINE, min_duration_ms=10), audit)
    with pytest.raises(SettingRangeError, match="not an index of the loaded set of 1024"):
        normalize(started, 5000, 1024)


# --- settings built in code: a ValueError naming the field --------------------------------------------

API_VALUES = [0, -1, 1e-300, 1e300, float("nan"), float("inf"), 2**63, 2**64 - 1, 2**64, "1", None, 1.5, True]


@pytest.mark.parametrize("field", sorted(RANGES))
def test_code_settings_are_refused_with_a_value_error_naming_the_field(field):
    tried = refused = 0
    for value in API_VALUES:
        s = dataclasses.replace(TestSettings(scenario=Scenario.OFFLINE, min_duration_ms=10), **{field: value})
        tried += 1
        problem = value_problem(field, value)
        if not problem:
            check_settings(s)
            continue
        refused += 1
        with pytest.raises(ValueError, match=field) as info:  # SettingRangeError is a ValueError
            check_settings(s)
        assert isinstance(info.value, SettingRangeError) and info.value.key == field
    assert refused >= 6, (field, refused, tried)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("server_target_qps", 1e-300), ("offline_expected_qps", 1e-300), ("single_stream_expected_latency_ns", 1e300),
        ("multi_stream_expected_latency_ns", float("inf")), ("min_duration_ms", 2**64 - 1),
        ("performance_issue_same_index", 2**64 - 1), ("server_target_latency_ns", 2**64), ("qsl_rng_seed", -1),
        ("min_duration_ms", "600000"), ("accuracy_log_probability", float("nan")), ("mode", 7), ("scenario", 9),
    ],
)
def test_the_official_api_fails_with_a_value_error_naming_the_field(tmp_path, field, value):
    import proctor.compat.mlperf_loadgen as lg

    def issue(samples):
        lg.QuerySamplesComplete([lg.QuerySampleResponse(s.id, 0, 0) for s in samples])

    sut = lg.ConstructSUT(issue, lambda: None)
    qsl = lg.ConstructQSL(64, 64, lambda i: None, lambda i: None)
    ts = lg.TestSettings()
    ts.scenario = {"server_target_qps": lg.TestScenario.Server, "offline_expected_qps": lg.TestScenario.Offline,
                   "multi_stream_expected_latency_ns": lg.TestScenario.MultiStream}.get(field, lg.TestScenario.SingleStream)
    ts.mode = lg.TestMode.PerformanceOnly
    ts.min_duration_ms, ts.min_query_count, ts.performance_issue_same = 10, 4, True
    setattr(ts, field, value)
    log = lg.LogSettings()
    log.log_output.outdir = str(tmp_path)
    try:
        with pytest.raises(ValueError) as info:
            lg.StartTestWithLogSettings(sut, qsl, ts, log, "")
    finally:
        lg.DestroySUT(sut)
        lg.DestroyQSL(qsl)
    assert isinstance(info.value, SettingRangeError) and info.value.key == field, info.value
    assert "Overflow" not in str(info.value) and "\n" not in str(info.value)


# --- the second guard: normalize and the schedule ---------------------------------------------------------


def test_normalize_guards_values_built_around_check_settings():
    s = TestSettings(scenario=Scenario.OFFLINE, min_duration_ms=10)
    with pytest.raises(SettingRangeError, match="performance_issue_same_index"):
        normalize(dataclasses.replace(s, performance_issue_same=True, performance_issue_same_index=1024), 5000, 1024)
    assert normalize(dataclasses.replace(s, performance_issue_same=True, performance_issue_same_index=1023), 5000, 1024)
    with pytest.raises(SettingRangeError, match="performance_issue_same_index"):  # the loaded set: min(psc, total)
        normalize(dataclasses.replace(s, performance_issue_same=True, performance_issue_same_index=10,
                                      performance_sample_count_override=64), 8, 8)
    with pytest.raises(SettingRangeError, match="target_qps"):
        normalize(dataclasses.replace(s, offline_expected_qps=1e-300), 100, 10)
    ss = TestSettings(scenario=Scenario.SINGLE_STREAM, single_stream_expected_latency_ns=1e15, min_query_count=10**5)
    with pytest.raises(SettingRangeError, match="int64 nanosecond clock"):  # 1e5 queries x 11.6 days
        normalize(ss, 100, 10)
    with pytest.raises(SettingRangeError, match="clock"):  # an accuracy phase issues every sample
        normalize(dataclasses.replace(ss, min_query_count=1, mode=TestMode.ACCURACY_ONLY), 10**5, 10)
    assert normalize(dataclasses.replace(s, server_target_qps=-1.0), 100, 10)  # official clamping stays


@pytest.mark.parametrize("scenario", [Scenario.SERVER, Scenario.SINGLE_STREAM])
def test_the_schedule_refuses_to_wrap_the_clock(scenario):
    """Effective settings made by hand (past normalize's guard) still cannot wrap the int64 clock."""
    ok = normalize(TestSettings(scenario=scenario, min_duration_ms=0, min_query_count=4), 64, 64)
    bad = dataclasses.replace(ok, target_qps=1e-6, min_query_count=10**12)
    loaded = loadable_sets(bad, 64, TestMode.PERFORMANCE_ONLY)[0]
    with pytest.raises(SettingRangeError, match="clock"):
        generate_schedule(bad, loaded, TestMode.PERFORMANCE_ONLY)


# --- hypothesis: any values, the whole pipeline -------------------------------------------------------------

NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, 1e-6, 1e9, 1e15, 1e18, 2**53, 2**63, 2**64 - 1, 1e-300, 1e300]),
)
SMALL = st.one_of(st.integers(0, 50), st.sampled_from([2**40, 2**64 - 1, 1e300, -1, float("nan")]))


@given(
    scenario=st.sampled_from(list(Scenario)),
    mode=st.sampled_from([TestMode.PERFORMANCE_ONLY, TestMode.ACCURACY_ONLY]),
    rate=NUMBERS,
    latency=NUMBERS,
    duration=st.one_of(st.integers(0, 20), NUMBERS),
    min_queries=SMALL,
    max_queries=SMALL,
    spq=st.one_of(st.integers(1, 9), SMALL),
    same=st.booleans(),
    same_index=SMALL,
    equal=st.booleans(),
    psc_override=SMALL,
    total=st.integers(1, 300),
)
def test_any_settings_are_refused_cleanly_or_run_within_the_clock(
    scenario, mode, rate, latency, duration, min_queries, max_queries, spq, same, same_index, equal,
    psc_override, total,
):
    s = TestSettings(
        scenario=scenario, mode=mode, server_target_qps=rate, offline_expected_qps=rate,
        single_stream_expected_latency_ns=latency, multi_stream_expected_latency_ns=latency,
        server_target_latency_ns=10**7, min_duration_ms=duration, min_query_count=min_queries,
        max_query_count=max_queries, multi_stream_samples_per_query=spq, performance_issue_same=same,
        performance_issue_same_index=same_index, sample_concatenate_permutation=equal,
        performance_sample_count_override=psc_override,
    )
    try:
        check_settings(s)
        eff = normalize(s, total, min(total, 64))
    except SettingRangeError as exc:
        assert exc.key and "\n" not in str(exc)
        return
    assert isinstance(eff, EffectiveSettings)
    # small enough to build here: the schedule is within the clock, the indices within the QSL
    per_query = eff.samples_per_query
    queries = max(eff.min_query_count, eff.target_qps * 2 * eff.target_duration_ms / 1000)
    assume(queries * per_query <= 20_000 and eff.performance_sample_count <= 10_000)
    sets = loadable_sets(eff, total, mode)
    sched = generate_schedule(eff, sets[0], mode)
    ts = sched.scheduled_ns
    assert ts.dtype == np.int64 and (ts >= 0).all() and (np.diff(ts) >= 0).all()
    assert 0 <= sched.duration_ns < INT64_MAX
    if sched.sample_index.shape[0]:
        assert int(sched.sample_index.max()) < total and int(sched.sample_index.min()) >= 0


@given(
    read=st.sampled_from(NUMERIC_READS),
    value=st.one_of(
        st.sampled_from(HOSTILE),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.integers(min_value=-(2**70), max_value=2**70).map(str),
        st.text(max_size=12),
    ),
    ctype=st.sampled_from(list(ConfType)),
)
def test_any_conf_value_is_refused_with_its_line_or_lands_in_range(read, value, ctype):
    text = _line(read, value)
    try:
        entries = parse_conf(text, ctype, name="f.conf")
        settings = apply_conf(TestSettings(scenario=_scenario_of(read)), entries, "m", _scenario_of(read), ctype)
    except ConfigError as exc:
        assert exc.file == "f.conf" and exc.line is not None and exc.line >= 1 and "\n" not in str(exc)
        return
    for name in RANGES:
        assert value_problem(name, getattr(settings, name)) == "", name
