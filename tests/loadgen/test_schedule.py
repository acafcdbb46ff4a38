"""Loadable sets and query generation: scenario invariants, and bit-exact traces of the official LoadGen."""

from __future__ import annotations

import atexit
import dataclasses
import shutil
import tempfile
from pathlib import Path

import numpy as np
import orjson
import pytest

from proctor.loadgen.normalize import normalize
from proctor.loadgen.schedule import accuracy_log_mask, generate_schedule, loadable_sets, query_timeline
from proctor.loadgen.settings import TestSettings as Settings
from proctor.loadgen.types import Scenario
from proctor.loadgen.types import TestMode as Mode
from proctor.mllog_lines import LogLine, iter_log

SEEDS = dict(
    qsl_rng_seed=2085463073848966840,
    sample_index_rng_seed=2747215439041700203,
    schedule_rng_seed=16159082839903944936,
)
ACC, PERF = Mode.ACCURACY_ONLY, Mode.PERFORMANCE_ONLY


def eff_for(total: int, psc: int, **kw):
    return normalize(Settings(**{**SEEDS, **kw}), total, psc)


# ------------------------------------------------------------------ invariants


def test_loadable_sets_cover_psc_and_multistream_padding():
    e = eff_for(100, 10)
    sets = loadable_sets(e, 100, PERF)
    assert len(sets) == 1 and sorted(sets[0].tolist()) == list(range(10))
    acc = loadable_sets(e, 25, ACC)  # accuracy: all 25 samples in sets of psc
    assert [s.shape[0] for s in acc] == [10, 10, 5]
    assert sorted(np.concatenate(acc).tolist()) == list(range(25))
    ms = eff_for(100, 10, scenario=Scenario.MULTI_STREAM, multi_stream_samples_per_query=4)
    s = loadable_sets(ms, 100, PERF)[0]
    assert s.shape[0] == 13 and s[10:].tolist() == s[:3].tolist()
    short = loadable_sets(ms, 12, ACC)[1]  # a 2-sample set padded by 3: wraps around
    assert short.tolist() == [short[0], short[1], short[0], short[1], short[0]]


@pytest.mark.parametrize("scenario", list(Scenario))
@pytest.mark.parametrize("concat", [False, True])
def test_accuracy_mode_issues_every_sample_once(scenario, concat):
    e = eff_for(
        23,
        10,
        scenario=scenario,
        sample_concatenate_permutation=concat,
        min_query_count=500,
        min_duration_ms=1000,
        server_target_qps=100.0,
        multi_stream_samples_per_query=3,
    )
    issued = []
    for st in loadable_sets(e, 23, ACC):
        sch = generate_schedule(e, st, ACC)
        assert sch.accuracy_log_mask.all()
        if scenario is Scenario.MULTI_STREAM:
            assert (np.diff(sch.query_offsets) == 3).all()
            # each query starts at a distinct stride position; padding only completes the last one
            firsts = sch.sample_index[sch.query_offsets[:-1]]
            issued += firsts.tolist()
            assert len(firsts) == -(-(st.shape[0] - 2) // 3)
        else:
            issued += sch.sample_index.tolist()
    if scenario is Scenario.MULTI_STREAM:
        assert len(issued) == len(set(issued))
    else:
        assert sorted(issued) == list(range(23))


def test_single_stream_query_count_follows_duration_and_minimum():
    e = eff_for(100, 20, min_duration_ms=100, min_query_count=30, single_stream_expected_latency_ns=2e6)
    sch = generate_schedule(e, loadable_sets(e, 100, PERF)[0], PERF)
    # queries every 2 ms until 2 x 100 ms: indices 0..100 -> 101 queries
    assert sch.n_queries == 101
    assert sch.scheduled_ns.tolist() == [2_000_000 * k for k in range(101)]
    e2 = dataclasses.replace(e, min_query_count=500)
    assert generate_schedule(e2, loadable_sets(e2, 100, PERF)[0], PERF).n_queries == 500
    tl = query_timeline(e, 20, PERF)
    assert tl.shape[0] == 102 and tl[-1] == 202_000_000
    assert set(sch.sample_index.tolist()) <= set(loadable_sets(e, 100, PERF)[0].tolist())


def test_multistream_samples_per_query_are_contiguous_in_the_loaded_set():
    e = eff_for(
        100,
        20,
        scenario=Scenario.MULTI_STREAM,
        multi_stream_samples_per_query=8,
        multi_stream_expected_latency_ns=10e6,
        min_duration_ms=50,
        min_query_count=4,
    )
    st = loadable_sets(e, 100, PERF)[0]
    sch = generate_schedule(e, st, PERF)
    assert sch.n_queries == 11 and sch.n_samples == 88
    for q in range(sch.n_queries):
        samples = sch.samples_of(q)
        start = int(np.flatnonzero(st == samples[0])[0])
        assert samples.tolist() == st[start : start + 8].tolist()
        assert start < 20  # starts only in the unpadded part


def test_offline_single_query_of_spq_samples():
    e = eff_for(
        100,
        30,
        scenario=Scenario.OFFLINE,
        min_duration_ms=1000,
        offline_expected_qps=100.0,
        min_query_count=50,
    )
    assert e.samples_per_query == 110
    st = loadable_sets(e, 100, PERF)[0]
    sch = generate_schedule(e, st, PERF)
    assert sch.n_queries == 1 and sch.n_samples == 110 and sch.scheduled_ns.tolist() == [0]
    assert sch.sample_index.tolist() == (st.tolist() * 4)[:110]
    eq = dataclasses.replace(e, sample_concatenate_permutation=True)
    sch = generate_schedule(eq, st, PERF)
    assert sch.n_samples == 120  # padded to a multiple of the set
    blocks = sch.sample_index.reshape(4, 30)
    assert all(sorted(b.tolist()) == sorted(st.tolist()) for b in blocks)
    assert any(b.tolist() != st.tolist() for b in blocks)


def test_equal_issue_single_stream_uses_each_sample_equally():
    e = eff_for(
        100,
        10,
        min_duration_ms=100,
        min_query_count=30,
        single_stream_expected_latency_ns=2e6,
        sample_concatenate_permutation=True,
    )
    sch = generate_schedule(e, loadable_sets(e, 100, PERF)[0], PERF)
    assert sch.n_queries % 10 == 0 and sch.n_queries >= 101
    counts = np.bincount(sch.sample_index)
    assert set(counts[counts > 0].tolist()) == {sch.n_queries // 10}


def test_server_count_and_poisson_rate():
    e = eff_for(
        100, 20, scenario=Scenario.SERVER, min_duration_ms=2000, min_query_count=10, server_target_qps=5000.0
    )
    sch = generate_schedule(e, loadable_sets(e, 100, PERF)[0], PERF)
    ts = sch.scheduled_ns
    assert ts[0] == 0 and (np.diff(ts) >= 0).all()
    assert ts[-2] < 2_000_000_000 <= ts[-1]  # stops at the first query at or past the duration
    assert abs(sch.n_queries / 2.0 - 5000) < 5000 * 0.05
    tl = query_timeline(e, 20, PERF)
    assert np.array_equal(tl[:-1], ts)


def test_large_offline_schedule_is_arrays():
    e = eff_for(50000, 1024, scenario=Scenario.OFFLINE, min_query_count=1_000_000, min_duration_ms=1000)
    sch = generate_schedule(e, loadable_sets(e, 50000, PERF)[0], PERF)
    assert sch.n_samples == 1_000_000 and sch.sample_index.dtype == np.uint16  # narrowest for 50000
    assert sch.accuracy_log_mask.shape == (1_000_000,) and not sch.accuracy_log_mask.any()


def test_accuracy_log_mask_probability_and_target():
    e = eff_for(100, 20, accuracy_log_probability=0.0)
    assert not accuracy_log_mask(e, 1000).any()
    assert accuracy_log_mask(dataclasses.replace(e, accuracy_log_probability=1.0), 1000).all()
    half = accuracy_log_mask(
        dataclasses.replace(e, accuracy_log_probability=0.5, accuracy_log_rng_seed=3), 20000
    )
    assert 0.48 < half.mean() < 0.52
    # target 100 over max(1000 qps * 10 s, ...) expected samples -> ~1%
    t = eff_for(
        100,
        20,
        single_stream_expected_latency_ns=1e6,
        min_duration_ms=10000,
        accuracy_log_sampling_target=100,
    )
    m = accuracy_log_mask(t, 10000)
    assert 60 < m.sum() < 140
    later = accuracy_log_mask(t, 5000, first_sample_seq=5000)
    assert np.array_equal(later, m[5000:])


def test_submission_run_must_be_split():
    e = eff_for(100, 20)
    with pytest.raises(ValueError, match="SubmissionRun"):
        loadable_sets(e, 100, Mode.SUBMISSION_RUN)


# ------------------------------------------------------------------ differential vs official


def run_official(settings: dict, total: int, perf_count: int) -> dict:
    """One official LoadGen run with a SUT that records every issued index and completes inline."""
    lg = pytest.importorskip("mlperf_loadgen")
    ts = lg.TestSettings()
    for k, v in settings.items():
        if k == "scenario":
            v = getattr(lg.TestScenario, str(v))
        elif k == "mode":
            v = getattr(lg.TestMode, str(v))
        setattr(ts, k, v)
    loaded, issued = [], []

    def issue(qs):
        issued.append([q.index for q in qs])
        lg.QuerySamplesComplete([lg.QuerySampleResponse(q.id, 0, 0) for q in qs])

    sut = lg.ConstructSUT(issue, lambda: None)
    qsl = lg.ConstructQSL(total, perf_count, lambda idx: loaded.append(list(idx)), lambda idx: None)
    out = tempfile.mkdtemp(prefix="proctor-sched-")
    atexit.register(shutil.rmtree, out, True)  # hypothesis calls this many times: no tmp_path
    log = lg.LogSettings()
    log.log_output.outdir = out
    log.enable_trace = False
    lg.StartTestWithLogSettings(sut, qsl, ts, log, str(Path(out) / "no-audit.config"))
    lg.DestroyQSL(qsl)
    lg.DestroySUT(sut)
    detail: dict[str, list] = {}
    for rec in iter_log(Path(out) / "mlperf_log_detail.txt"):
        if isinstance(rec, LogLine):
            detail.setdefault(rec.key, []).append(rec.value)
    logged = sorted(e["seq_id"] for e in orjson.loads((Path(out) / "mlperf_log_accuracy.json").read_bytes()))
    return dict(loaded=loaded, issued=issued, detail=detail, logged=logged)


def ours(settings: dict, total: int, perf_count: int) -> dict:
    e = normalize(Settings(**settings), total, perf_count)
    mode = Mode(e.test_mode)
    phases = [ACC, PERF] if mode is Mode.SUBMISSION_RUN else [mode]
    loaded, issued, logged, counts, durations, seq = [], [], [], [], [], 0
    for phase in phases:
        sets = loadable_sets(e, total, phase)
        for st in sets if phase is ACC else sets[:1]:
            sch = generate_schedule(e, st, phase, first_sample_seq=seq)
            loaded.append(st.tolist())
            issued += [sch.samples_of(q).tolist() for q in range(sch.n_queries)]
            logged += (np.flatnonzero(sch.accuracy_log_mask) + seq).tolist()
            tl = query_timeline(e, st.shape[0], phase)
            assert sch.duration_ns == int(tl[-1])  # the schedule carries what the timeline gives
            counts.append(tl.shape[0] - 1)
            durations.append(sch.duration_ns)
            seq += sch.n_samples
    return dict(loaded=loaded, issued=issued, logged=logged, counts=counts, durations=durations)


SS = dict(
    scenario=Scenario.SINGLE_STREAM,
    min_duration_ms=100,
    min_query_count=30,
    single_stream_expected_latency_ns=2e6,
)
MS = dict(
    scenario=Scenario.MULTI_STREAM,
    min_duration_ms=100,
    min_query_count=30,
    multi_stream_expected_latency_ns=2e6,
    multi_stream_samples_per_query=4,
)
OFF = dict(scenario=Scenario.OFFLINE, min_duration_ms=100, min_query_count=50, offline_expected_qps=1000.0)
SRV = dict(scenario=Scenario.SERVER, min_duration_ms=100, min_query_count=30, server_target_qps=1000.0)
CASES = {
    # Performance runs generate 2x the duration's queries; an instant SUT issues them all and
    # the official LoadGen then reports "ran out of generated queries": the whole trace is seen.
    "ss-perf": (SS, 100, 20),
    "ss-acc": ({**SS, "mode": ACC}, 50, 20),
    "ss-perf-equal-issue": ({**SS, "sample_concatenate_permutation": True}, 100, 20),
    "ss-acc-equal-issue": ({**SS, "mode": ACC, "sample_concatenate_permutation": True}, 50, 20),
    "ss-issue-unique": ({**SS, "performance_issue_unique": True}, 100, 20),
    "ss-issue-same": ({**SS, "performance_issue_same": True, "performance_issue_same_index": 3}, 100, 20),
    "ss-submission": ({**SS, "mode": Mode.SUBMISSION_RUN}, 50, 20),
    "ms-perf": (MS, 100, 21),
    "ms-acc": ({**MS, "mode": ACC}, 50, 21),
    "ms-perf-equal-issue": ({**MS, "sample_concatenate_permutation": True}, 100, 21),
    "ms-issue-unique": ({**MS, "performance_issue_unique": True}, 100, 21),
    "offline-perf": (OFF, 100, 20),
    "offline-acc": ({**OFF, "mode": ACC}, 50, 20),
    "offline-perf-equal-issue": ({**OFF, "sample_concatenate_permutation": True}, 100, 20),
    "offline-acc-equal-issue": ({**OFF, "mode": ACC, "sample_concatenate_permutation": True}, 50, 20),
    "offline-issue-same": (
        {**OFF, "performance_issue_same": True, "performance_issue_same_index": 2},
        100,
        20,
    ),
    "offline-many-repeats-equal-issue": (
        {**OFF, "offline_expected_qps": 50000.0, "sample_concatenate_permutation": True},
        1000,
        300,
    ),
    "server-perf": (SRV, 100, 20),
    "server-acc": ({**SRV, "mode": ACC}, 50, 20),
    "server-perf-equal-issue": ({**SRV, "sample_concatenate_permutation": True}, 100, 20),
    "server-3000-queries": ({**SRV, "server_target_qps": 30000.0}, 1000, 500),
    # Large loaded sets: libstdc++'s paired-draw shuffle with many rejections (50000 <= 65535),
    # and the one-draw-per-element shuffle (70000 > 65535); one query each.
    "qsl-shuffle-50000": ({**SS, "min_duration_ms": 0, "min_query_count": 1}, 50000, 50000),
    "qsl-shuffle-70000": ({**SS, "min_duration_ms": 0, "min_query_count": 1}, 70000, 70000),
    # Perf-mode accuracy-log sampling (official: default-seeded per-sample draws + seeded offset).
    "acclog-probability": (
        {**SS, "accuracy_log_probability": 0.3, "accuracy_log_rng_seed": 720381539243781796},
        100,
        20,
    ),
    "acclog-target": ({**SS, "accuracy_log_sampling_target": 20, "accuracy_log_rng_seed": 12345}, 100, 20),
    "acclog-submission": (
        {**SS, "mode": Mode.SUBMISSION_RUN, "accuracy_log_probability": 0.2, "accuracy_log_rng_seed": 7},
        30,
        20,
    ),
    "acclog-offline": ({**OFF, "accuracy_log_sampling_target": 15}, 100, 20),
}


@pytest.mark.official
@pytest.mark.parametrize("name", list(CASES))
def test_trace_equals_official(name):
    requested, total, perf_count = CASES[name]
    requested = {**SEEDS, **requested}
    off = run_official(requested, total, perf_count)
    mine = ours(requested, total, perf_count)
    assert mine["loaded"] == off["loaded"]
    assert len(mine["issued"]) == len(off["issued"])
    assert mine["issued"] == off["issued"]
    n_issued = sum(len(q) for q in off["issued"])
    assert [s for s in mine["logged"] if s < n_issued] == off["logged"]
    # Every GenerateQueries call logs its query count and the timestamp after its last query:
    # for Server that is the exact sum of the exponential draws, in ns.
    assert mine["counts"] == off["detail"]["generated_query_count"]
    assert mine["durations"] == off["detail"]["generated_query_duration"]


def test_zero_rate_cannot_be_scheduled():
    with pytest.raises(ValueError, match="target_qps"):  # normalize refuses it ...
        eff_for(100, 20, scenario=Scenario.SERVER, server_target_qps=0.0, min_duration_ms=10)
    e = eff_for(100, 20, scenario=Scenario.SERVER, server_target_qps=1.0, min_duration_ms=10)
    for qps in (0.0, 1e-300, float("nan"), float("inf")):  # ... and so does the schedule, built around it
        bad = dataclasses.replace(e, target_qps=qps)
        with pytest.raises(ValueError, match="target_qps"):
            generate_schedule(bad, loadable_sets(bad, 100, PERF)[0], PERF)
