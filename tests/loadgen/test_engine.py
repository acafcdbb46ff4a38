"""The run engine, issuer and completion path, on fake clocks and instant SUTs (no timed assertions)."""

from __future__ import annotations

import sys
import threading

import numpy as np
import orjson
import pytest

from proctor.cli.live_progress import format_snapshot
from proctor.loadgen import completion
from proctor.loadgen.clock import ManualClock, MonotonicClock
from proctor.loadgen.engine import RunOutcome, log_paths, run_test
from proctor.loadgen.issuer import (
    FINE_SLACK_MAX_QPS,
    ISSUE_SWITCH_INTERVAL_S,
    ISSUE_TIMER_SLACK_NS,
    PR_GET_TIMERSLACK,
    _prctl,
    short_switch_interval,
)
from proctor.loadgen.logs.reader import read_detail
from proctor.loadgen.progress import ProgressHooks, snapshot
from proctor.loadgen.records import NOT_SET
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import QuerySample, QuerySampleResponse, Scenario, TestMode
from proctor.suts.synthetic import InMemoryQSL, SyntheticParams, SyntheticSUT

MS = 1_000_000


class RecordingSUT:
    """Completes every sample inline; optionally advances a ManualClock first (a fixed service time)."""

    name = "recording-sut"

    def __init__(self, clock: ManualClock | None = None, service_ns: int = 0, arrays: bool = False) -> None:
        self.clock, self.service_ns = clock, service_ns
        self.calls: list[tuple[list[int], list[int]]] = []
        self.flushes = 0
        if arrays:
            self.issue_query_arrays = self._arrays

    def issue_query(self, samples: list[QuerySample]) -> None:
        self.calls.append(([s.id for s in samples], [s.index for s in samples]))
        if self.clock is not None:
            self.clock.advance(self.service_ns)
        completion.query_samples_complete(
            [QuerySampleResponse(s.id, np.int64(s.index).tobytes()) for s in samples]
        )

    def _arrays(self, ids: np.ndarray, indices: np.ndarray) -> None:
        self.calls.append((ids.tolist(), indices.tolist()))
        if self.clock is not None:
            self.clock.advance(self.service_ns)
        completion.complete_arrays(ids, None, data=indices.astype("<i8").reshape(-1, 1))

    def flush_queries(self) -> None:
        self.flushes += 1


def settings(scenario: Scenario, mode: TestMode = TestMode.PERFORMANCE_ONLY, **kw: object) -> TestSettings:
    base: dict[str, object] = dict(
        scenario=scenario,
        mode=mode,
        min_duration_ms=50,
        min_query_count=10,
        server_target_qps=2000.0,
        offline_expected_qps=1000.0,
        single_stream_expected_latency_ns=1e6,
        multi_stream_expected_latency_ns=1e6,
        multi_stream_samples_per_query=4,
    )
    base.update(kw)
    return TestSettings(**base)  # type: ignore[arg-type]


def logs_in(tmp_path, trace: bool = True) -> LogSettings:
    return LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path)), enable_trace=trace)


def run(tmp_path, sut, qsl, ts, **kw) -> RunOutcome:
    return run_test(sut, qsl, ts, logs_in(tmp_path), audit_config=None, **kw)


def accuracy_entries(path) -> list[dict]:
    return orjson.loads(path.read_bytes())


# --- the issue loops on a manual clock --------------------------------------------------------------


def test_single_stream_closed_loop_stops_at_min_queries_and_duration(tmp_path):
    clock = ManualClock()
    sut = RecordingSUT(clock, service_ns=1 * MS)
    out = run(
        tmp_path,
        sut,
        InMemoryQSL(64, 16),
        settings(Scenario.SINGLE_STREAM, min_duration_ms=50, min_query_count=10),
        clock=clock,
    )
    rec = out.records
    # query q is issued at start + q ms; the run stops after the first issue at >= 50 ms
    assert rec.n_queries_issued == 51
    assert out.issue_stop_reason == "done"
    assert np.array_equal(rec.query_issued_ns[:51] - rec.start_ns, np.arange(51) * MS)
    assert np.array_equal(rec.query_scheduled_ns[:51], rec.query_issued_ns[:51])
    assert np.all(rec.sample_done_ns[:51] - rec.query_scheduled_ns[:51] == MS)
    assert out.result.samples.percentiles[0.9] == MS
    assert out.result.issue_lateness_max_ns == 0
    assert [len(ids) for ids, _ in sut.calls] == [1] * 51
    assert sut.flushes == 1


def test_multi_stream_issues_contiguous_samples_per_query(tmp_path):
    clock = ManualClock()
    sut = RecordingSUT(clock, service_ns=2 * MS, arrays=True)
    out = run(
        tmp_path,
        sut,
        InMemoryQSL(64, 16),
        settings(Scenario.MULTI_STREAM, min_duration_ms=20, min_query_count=5),
        clock=clock,
    )
    assert out.records.n_queries_issued == 11  # issued at 0, 2, ..., 20 ms
    assert all(len(ids) == 4 for ids, _ in sut.calls)
    ids = [i for call, _ in sut.calls for i in call]
    base = ids[0]  # response ids are the phase's id base (its generation token) + sequence numbers
    assert base % (1 << 32) == 0 and ids == list(range(base, base + 44))
    assert out.result.queries.max == 2 * MS


def test_server_queries_leave_at_their_scheduled_time(tmp_path):
    clock = ManualClock()
    sut = RecordingSUT(clock, service_ns=0)
    out = run(tmp_path, sut, InMemoryQSL(64, 16), settings(Scenario.SERVER, min_duration_ms=50), clock=clock)
    rec, sched = out.records, out.schedule
    n = rec.n_queries_issued
    assert n == sched.n_queries and n > 50  # Server issues every generated query
    assert np.array_equal(rec.query_scheduled_ns[:n] - rec.start_ns, sched.scheduled_ns)
    assert np.array_equal(rec.query_issued_ns[:n], rec.query_scheduled_ns[:n])
    assert out.result.issue_lateness_max_ns == 0


@pytest.mark.parametrize("coalesce", [False, True])
def test_server_late_queries_go_at_once_and_coalesce(tmp_path, coalesce):
    clock = ManualClock()
    sut = RecordingSUT(clock, service_ns=3 * MS)  # 6 mean intervals per call at 2000 qps
    out = run(
        tmp_path,
        sut,
        InMemoryQSL(64, 16),
        settings(Scenario.SERVER, min_duration_ms=50, server_coalesce_queries=coalesce),
        clock=clock,
    )
    rec, sched = out.records, out.schedule
    n = rec.n_queries_issued
    assert n == sched.n_queries
    # scheduled times stay the generated ones, whatever the batching
    assert np.array_equal(rec.query_scheduled_ns[:n] - rec.start_ns, sched.scheduled_ns)
    late = rec.query_issued_ns[:n] - rec.query_scheduled_ns[:n]
    assert late.min() >= 0 and late.max() > 0
    sizes = [len(ids) for ids, _ in sut.calls]
    assert sum(sizes) == n
    if coalesce:
        assert max(sizes) > 1 and len(sizes) < n
        # every query in a batch was already due when the batch left
        first = 0
        for size in sizes:
            issued = rec.query_issued_ns[first]
            assert np.all(rec.query_issued_ns[first : first + size] == issued)
            assert np.all(rec.query_scheduled_ns[first : first + size] <= issued)
            first += size
    else:
        assert sizes == [1] * n


def test_offline_is_one_query_with_every_sample(tmp_path):
    sut = RecordingSUT(arrays=True)
    out = run(
        tmp_path,
        sut,
        InMemoryQSL(64, 16),
        settings(Scenario.OFFLINE, min_duration_ms=100, offline_expected_qps=1000.0),
    )
    assert len(sut.calls) == 1
    assert len(sut.calls[0][0]) == 110  # max(min_query_count, 1.1 * 0.1 s * 1000)
    assert out.records.n_samples_issued == 110
    assert set(sut.calls[0][1]) <= set(range(64))


def test_max_query_count_ends_early_with_an_error(tmp_path):
    out = run(
        tmp_path,
        RecordingSUT(),
        InMemoryQSL(64, 16),
        settings(Scenario.SINGLE_STREAM, min_query_count=100, max_query_count=7),
    )
    assert out.records.n_queries_issued == 7
    assert out.issue_stop_reason == "max_query_count"
    assert out.errors == 1
    assert not out.valid
    errors = read_detail(out.log_paths["detail"]).errors
    assert any("Max query count" in str(e.value) for e in errors)


def test_running_out_of_generated_queries_is_an_error(tmp_path):
    # 2 x 50 ms of 1 ms queries are generated; an instant SUT issues them all well before 50 ms
    clock = ManualClock()
    out = run(
        tmp_path,
        RecordingSUT(clock, service_ns=1000),
        InMemoryQSL(64, 16),
        settings(Scenario.SINGLE_STREAM, min_duration_ms=50, min_query_count=10),
        clock=clock,
    )
    assert out.issue_stop_reason == "ran_out"
    assert out.records.n_queries_issued == out.schedule.n_queries == 101
    assert any(
        "Ran out of generated queries" in str(e.value) for e in read_detail(out.log_paths["detail"]).errors
    )


def test_server_max_async_queries_stops_when_too_many_outstanding(tmp_path):
    class Hoarder(RecordingSUT):
        def issue_query(self, samples):
            self.calls.append(([s.id for s in samples], []))

    sut = Hoarder()
    out = run(
        tmp_path,
        sut,
        InMemoryQSL(64, 16),
        settings(Scenario.SERVER, server_max_async_queries=3),
        clock=ManualClock(),
        timeout_s=0.2,
    )
    assert out.issue_stop_reason == "too_many_outstanding"
    assert out.records.n_queries_issued == 4  # stops once issued - completed > 3
    assert out.incomplete and "did not complete 4 of 4" in out.incomplete_reason


# --- modes ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("scenario", list(Scenario))
def test_accuracy_mode_issues_every_sample_once_and_logs_its_data(tmp_path, scenario):
    qsl = InMemoryQSL(50, 16)
    sut = RecordingSUT(arrays=scenario != Scenario.SERVER)
    out = run(tmp_path, sut, qsl, settings(scenario, TestMode.ACCURACY_ONLY))
    issued = [i for _, idx in sut.calls for i in idx]
    entries = accuracy_entries(out.log_paths["accuracy"])
    if scenario == Scenario.MULTI_STREAM:
        # whole queries of 4 contiguous loaded entries; a short last set is filled from its padding
        assert set(issued) == set(range(50)) and len(issued) % 4 == 0
    else:
        assert sorted(issued) == list(range(50))
    assert len(entries) == len(issued) == out.accuracy_samples
    for e in entries:
        assert bytes.fromhex(e["data"]) == np.int64(e["qsl_idx"]).tobytes()
    assert sorted(e["seq_id"] for e in entries) == list(range(len(entries)))
    assert out.result is None and not out.incomplete
    assert len(qsl.load_calls) == 4
    if scenario != Scenario.MULTI_STREAM:
        assert qsl.load_calls == [16, 16, 16, 2]
    assert np.all(qsl.loaded == 0)  # every set was unloaded again
    assert "No errors encountered during test." in out.log_paths["summary"].read_text()


def test_submission_run_does_accuracy_then_performance(tmp_path):
    sut = RecordingSUT(arrays=True)
    out = run(tmp_path, sut, InMemoryQSL(40, 16), settings(Scenario.OFFLINE, TestMode.SUBMISSION_RUN))
    assert out.accuracy_samples == 40
    assert out.result is not None and out.records.n_samples_issued == 55  # 1.1 x 0.05 s x 1000 qps
    assert [len(ids) for ids, _ in sut.calls] == [16, 16, 8, 55]
    detail = read_detail(out.log_paths["detail"])
    messages = [e.value for e in detail.entries if e.key == "generic_message"]
    assert messages.index("Starting accuracy mode") < messages.index("Starting performance mode")


def test_find_peak_performance_needs_server(tmp_path):
    out = run(
        tmp_path,
        RecordingSUT(),
        InMemoryQSL(64, 16),
        settings(Scenario.OFFLINE, TestMode.FIND_PEAK_PERFORMANCE),
    )
    assert out.result is None and out.errors == 1


def test_object_and_array_suts_get_the_same_samples(tmp_path):
    a, b = RecordingSUT(), RecordingSUT(arrays=True)
    ts = settings(Scenario.SERVER)
    run(tmp_path / "a", a, InMemoryQSL(64, 16), ts, clock=ManualClock())
    run(tmp_path / "b", b, InMemoryQSL(64, 16), ts, clock=ManualClock())
    def relative(calls):  # ids less each run's id base (its generation token)
        base = calls[0][0][0]
        return [([i - base for i in ids], idx) for ids, idx in calls]

    assert relative(a.calls) == relative(b.calls) and len(a.calls) > 50


def test_performance_mode_logs_only_the_sampled_accuracy_entries(tmp_path):
    out = run(
        tmp_path,
        RecordingSUT(arrays=True),
        InMemoryQSL(64, 16),
        settings(Scenario.OFFLINE, accuracy_log_probability=0.25),
    )
    mask = out.schedule.accuracy_log_mask
    entries = accuracy_entries(out.log_paths["accuracy"])
    assert 0 < len(entries) == int(mask.sum()) < out.schedule.n_samples
    assert sorted(e["seq_id"] for e in entries) == np.flatnonzero(mask).tolist()


# --- logs and settings ------------------------------------------------------------------------------


def test_detail_log_is_strict_json_in_official_order(tmp_path):
    out = run(tmp_path, RecordingSUT(), InMemoryQSL(64, 16), settings(Scenario.SINGLE_STREAM))
    lines = out.log_paths["detail"].read_text().splitlines()
    keys = [orjson.loads(line.removeprefix(":::MLLOG "))["key"] for line in lines]
    assert all(line.startswith(":::MLLOG {") for line in lines)
    assert keys[0] == "loadgen_version"
    order = [
        "test_datetime",
        "sut_name",
        "get_sut_name_duration_ns",
        "qsl_name",
        "qsl_reported_total_count",
        "qsl_reported_performance_count",
        "requested_scenario",
        "effective_scenario",
        "loaded_qsl_set",
        "generated_query_count",
        "power_begin",
        "power_end",
        "result_validity",
        "num_errors",
    ]
    assert [keys.index(k) for k in order] == sorted(keys.index(k) for k in order)
    detail = read_detail(out.log_paths["detail"])
    assert detail.require("sut_name") == "recording-sut"
    assert detail.require("requested_test_mode") == "PerformanceOnly"
    assert detail.require("qsl_reported_total_count") == 64
    assert detail.require("result_query_count") == out.records.n_queries_issued
    assert len(detail.require("loaded_qsl_set")) == 16


@pytest.mark.parametrize("scenario", [Scenario.OFFLINE, Scenario.SINGLE_STREAM])
def test_the_power_window_is_the_runs_span(tmp_path, scenario):
    """power_begin/power_end as the official logs them: the start of issue to the last completion
    (whole milliseconds), which the checker compares with the durations the results imply."""
    import datetime as dt

    sut = SyntheticSUT(SyntheticParams(service_us=2000, workers=1))
    try:
        run(tmp_path, sut, InMemoryQSL(64, 16), settings(scenario, min_duration_ms=100, offline_expected_qps=500))
    finally:
        sut.close()
    d = read_detail(tmp_path / "mlperf_log_detail.txt")
    fmt = "%m-%d-%Y %H:%M:%S.%f"
    span = (dt.datetime.strptime(d.get("power_end"), fmt) - dt.datetime.strptime(d.get("power_begin"), fmt)).total_seconds()
    top = d.get("result_max_latency_ns") / 1e9
    if scenario is Scenario.OFFLINE:  # one query from the start: its slowest sample ends the window
        assert abs(span - top) < 1e-3
    else:  # the last query is issued at (n - 1) / rate and ends the window within one latency
        issued = (d.get("result_query_count") - 1) / d.get("result_qps_with_loadgen_overhead")
        assert span - top - 1e-3 <= issued * (1 + 1e-5) and issued * (1 - 1e-5) <= span + 1e-3


def test_log_file_names_follow_log_settings(tmp_path):
    ls = LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path), prefix="p_", suffix="_s"))
    paths = log_paths(ls)
    assert paths["summary"].name == "p_summary_s.txt" and paths["trace"].name == "p_trace_s.json"
    ls.log_output.prefix_with_datetime = True
    import datetime as dt

    when = dt.datetime(2026, 1, 2, 3, 4, 5)
    assert log_paths(ls, when)["detail"].name == "p_2026-01-02T03:04:05_detail_s.txt"
    out = run_test(
        RecordingSUT(),
        InMemoryQSL(64, 16),
        settings(Scenario.OFFLINE),
        LogSettings(
            log_output=LogOutputSettings(outdir=str(tmp_path / "x"), prefix="p_", suffix="_s"),
            enable_trace=False,
        ),
        audit_config=None,
    )
    assert sorted(p.name for p in (tmp_path / "x").iterdir()) == [
        "p_accuracy_s.json",
        "p_detail_s.txt",
        "p_samples_s.bin",
        "p_summary_s.txt",
    ]
    assert not out.log_paths["trace"].exists()  # tracing off: no file (the official leaves an empty one)


def test_audit_config_overrides_settings(tmp_path):
    audit = tmp_path / "audit.config"
    audit.write_text("*.Server.target_qps = 1234\nresnet50.Server.target_qps = 99\n")
    out = run_test(
        RecordingSUT(),
        InMemoryQSL(64, 16),
        settings(Scenario.SERVER),
        logs_in(tmp_path / "l"),
        audit_config=audit,
        clock=ManualClock(),
    )
    detail = read_detail(out.log_paths["detail"])
    assert detail.require("requested_server_target_qps") == 1234  # model lines never match in audit.config
    assert out.effective.target_qps == 1234.0


def test_trace_has_one_begin_end_pair_per_sample(tmp_path):
    out = run(tmp_path, RecordingSUT(), InMemoryQSL(64, 16), settings(Scenario.SINGLE_STREAM))
    trace = orjson.loads(out.log_paths["trace"].read_bytes())
    samples = [e for e in trace["traceEvents"] if e.get("name") == "Sample"]
    assert len(samples) == 2 * out.records.n_samples_issued


def test_token_latencies_are_recorded(tmp_path):
    sut = SyntheticSUT(SyntheticParams(service_us=200, workers=2, tokens=4))
    try:
        out = run(
            tmp_path,
            sut,
            InMemoryQSL(64, 16),
            settings(Scenario.SERVER, use_token_latencies=True, server_target_qps=500.0),
        )
    finally:
        sut.close()
    rec, n = out.records, out.records.n_samples_issued
    assert out.errors == 0 and not out.incomplete
    assert np.all(rec.sample_n_tokens[:n] == 4)
    assert np.all(rec.sample_first_token_ns[:n] != NOT_SET)
    assert np.all(rec.sample_first_token_ns[:n] <= rec.sample_done_ns[:n])
    assert out.result.token_count == 4 * n
    assert out.result.ttft.max <= out.result.samples.max


# --- the completion path ----------------------------------------------------------------------------


class BadSUT(RecordingSUT):
    """Breaks the completion protocol in each way the official reports as error_runtime."""

    def issue_query(self, samples):
        ids = [s.id for s in samples]
        self.calls.append((ids, [s.index for s in samples]))
        completion.first_token_complete([QuerySampleResponse(i) for i in ids])
        completion.query_samples_complete([QuerySampleResponse(i, b"x", 1) for i in ids])  # n_tokens 1
        completion.query_samples_complete([QuerySampleResponse(ids[0], b"x", 5)])  # twice
        completion.first_token_complete([QuerySampleResponse(ids[0])])  # after completion
        completion.query_samples_complete([QuerySampleResponse(10**9, b"x", 5)])  # unknown id


def test_protocol_errors_are_counted_and_the_run_goes_on(tmp_path):
    out = run(
        tmp_path,
        BadSUT(),
        InMemoryQSL(64, 16),
        settings(Scenario.SINGLE_STREAM, use_token_latencies=True, min_query_count=3, min_duration_ms=0),
    )
    n = out.records.n_queries_issued
    assert n == 3 and not out.incomplete
    assert out.errors == 4 * n
    detail = read_detail(out.log_paths["detail"])
    texts = [str(e.value) for e in detail.errors]
    assert sum("n_tokens=1" in t for t in texts) == n
    assert sum("completed twice" in t for t in texts) == n
    assert sum("after completion" in t for t in texts) == n
    assert sum("unknown response id" in t for t in texts) == n
    assert detail.require("num_errors") == 4 * n
    assert f"{4 * n} ERRORS encountered. See detailed log." in out.log_paths["summary"].read_text()


def test_completion_outside_a_run_is_dropped():
    before = completion.late_completions
    completion.query_samples_complete([QuerySampleResponse(0), QuerySampleResponse(1)])
    completion.complete_arrays(np.arange(3))
    assert completion.late_completions == before + 5


def test_completions_from_many_threads_all_count(tmp_path):
    sut = SyntheticSUT(SyntheticParams(service_us=0, workers=4, batch=3))
    try:
        out = run(
            tmp_path,
            sut,
            InMemoryQSL(64, 16),
            settings(Scenario.OFFLINE, offline_expected_qps=20000.0, min_duration_ms=100),
        )
    finally:
        sut.close()
    rec = out.records
    assert rec.n_samples_issued == 2200
    assert np.all(rec.sample_done_ns[:2200] != NOT_SET)
    assert rec.query_done_ns[0] == rec.sample_done_ns.max()
    assert out.errors == 0


def test_one_run_at_a_time(tmp_path):
    started, release = threading.Event(), threading.Event()

    class Blocking(RecordingSUT):
        def issue_query(self, samples):
            started.set()
            release.wait(5)
            super().issue_query(samples)

    t = threading.Thread(
        target=run, args=(tmp_path / "a", Blocking(), InMemoryQSL(64, 16), settings(Scenario.OFFLINE))
    )
    t.start()
    try:
        assert started.wait(5)
        from proctor.errors import RunError

        with pytest.raises(RunError, match="already in progress"):
            run(tmp_path / "b", RecordingSUT(), InMemoryQSL(64, 16), settings(Scenario.OFFLINE))
    finally:
        release.set()
        t.join(10)


# --- progress ---------------------------------------------------------------------------------------


class Hooks(ProgressHooks):
    def __init__(self) -> None:
        self.events: list[str] = []
        self.snaps: list = []

    def on_phase(self, mode, schedule, records, tracker):
        self.events.append(f"phase:{mode}")
        self._s, self._r, self._t = schedule, records, tracker

    def on_phase_end(self, mode, records):
        self.events.append(f"end:{mode}")
        self.snaps.append(snapshot(self._s, records, self._t.completed_samples, records.end_ns))

    def on_end(self, outcome):
        self.events.append("done")


def test_progress_hooks_see_each_phase(tmp_path):
    hooks = Hooks()
    clock = ManualClock()
    run(
        tmp_path,
        RecordingSUT(clock, service_ns=MS),
        InMemoryQSL(20, 16),
        settings(Scenario.SINGLE_STREAM, TestMode.SUBMISSION_RUN),
        progress=hooks,
        clock=clock,
    )
    assert hooks.events == [
        "phase:AccuracyOnly",
        "end:AccuracyOnly",
        "phase:AccuracyOnly",
        "end:AccuracyOnly",
        "phase:PerformanceOnly",
        "end:PerformanceOnly",
        "done",
    ]
    snap = hooks.snaps[-1]
    assert snap.samples_issued == snap.samples_completed == 51
    assert snap.latency_ms[0.5] == pytest.approx(1.0)
    assert "samples 51 issued / 51 done" in format_snapshot(snap, "PerformanceOnly")


def test_test05_forces_performance_mode_with_its_seeds(tmp_path):
    sut = RecordingSUT()
    ts = settings(
        Scenario.OFFLINE,
        TestMode.SUBMISSION_RUN,
        test05=True,
        test05_qsl_rng_seed=11,
        test05_sample_index_rng_seed=22,
        test05_schedule_rng_seed=33,
    )
    out = run(tmp_path, sut, InMemoryQSL(64, 16), ts)
    assert out.accuracy_samples == 0 and len(sut.calls) == 1  # no accuracy phase
    detail = read_detail(out.log_paths["detail"])
    assert detail.require("requested_test_mode") == "PerformanceOnly"
    assert [detail.require(f"effective_{k}_rng_seed") for k in ("qsl", "sample_index", "schedule")] == [
        11,
        22,
        33,
    ]


def test_live_progress_prints_the_final_line(tmp_path):
    import io

    from rich.console import Console

    from proctor.cli.live_progress import LiveProgress

    buf = io.StringIO()
    live = LiveProgress(Console(file=buf, width=200), interval_s=0.01)
    clock = ManualClock()
    run(
        tmp_path,
        RecordingSUT(clock, service_ns=MS),
        InMemoryQSL(64, 16),
        settings(Scenario.SINGLE_STREAM),
        progress=live,
        clock=clock,
    )
    text = buf.getvalue()
    assert "PerformanceOnly" in text and "samples 51 issued / 51 done" in text


def test_accuracy_run_on_worker_threads_logs_every_output(tmp_path):
    sut = SyntheticSUT(SyntheticParams(service_us=20, workers=3, batch=5))
    try:
        out = run(tmp_path, sut, InMemoryQSL(300, 64), settings(Scenario.OFFLINE, TestMode.ACCURACY_ONLY))
    finally:
        sut.close()
    entries = accuracy_entries(out.log_paths["accuracy"])
    assert out.accuracy_samples == len(entries) == 300
    assert sorted(e["qsl_idx"] for e in entries) == list(range(300))


# --- the GIL switch interval while issuing -----------------------------------------------------------
# The issuer shortens CPython's switch interval while it issues timed queries (Server, SingleStream,
# MultiStream), so a thread spinning in Python delays an arrival by ~0.5 ms, not 5 ms; Offline keeps
# the process's setting; the old value comes back after the run.


class IntervalSUT(RecordingSUT):
    def __init__(self) -> None:
        super().__init__(ManualClock(), 1_000_000)
        self.intervals: set[float] = set()

    def issue_query(self, samples: list[QuerySample]) -> None:
        self.intervals.add(sys.getswitchinterval())
        super().issue_query(samples)


@pytest.mark.parametrize(
    ("scenario", "short"),
    [(Scenario.SERVER, True), (Scenario.SINGLE_STREAM, True), (Scenario.MULTI_STREAM, True), (Scenario.OFFLINE, False)],
)
def test_switch_interval_while_issuing(tmp_path, scenario: Scenario, short: bool) -> None:
    before = sys.getswitchinterval()
    assert before > ISSUE_SWITCH_INTERVAL_S  # CPython's default, 5 ms
    sut = IntervalSUT()
    run(tmp_path, sut, InMemoryQSL(64, 64), settings(scenario), clock=sut.clock)
    assert sut.intervals == {ISSUE_SWITCH_INTERVAL_S if short else before}
    assert sys.getswitchinterval() == before


# --- the issuing thread's timer slack in the Server scenario ----------------------------------------
# Above FINE_SLACK_MAX_QPS the slack follows the adaptive clock's spin (it starts sleeping: the thread's
# own slack); at or below it the fine slack holds from the first arrival (it costs next to nothing there).


class SlackSUT(RecordingSUT):
    def __init__(self) -> None:
        super().__init__()
        self.slacks: list[int] = []

    def issue_query(self, samples: list[QuerySample]) -> None:
        self.slacks.append(int(_prctl()(PR_GET_TIMERSLACK, 0, 0, 0, 0)))
        super().issue_query(samples)


@pytest.mark.parametrize(("qps", "fine"), [(FINE_SLACK_MAX_QPS / 20, True), (FINE_SLACK_MAX_QPS * 4, False)])
def test_server_timer_slack_is_fine_at_low_rates(tmp_path, qps: float, fine: bool) -> None:
    if _prctl() is None:
        pytest.skip("prctl timer slack is Linux only")
    before = int(_prctl()(PR_GET_TIMERSLACK, 0, 0, 0, 0))
    assert before != ISSUE_TIMER_SLACK_NS
    sut = SlackSUT()
    run(tmp_path, sut, InMemoryQSL(64, 64), settings(Scenario.SERVER, server_target_qps=qps, min_query_count=4),
        clock=MonotonicClock(30_000))
    assert sut.slacks
    if fine:
        assert set(sut.slacks) == {ISSUE_TIMER_SLACK_NS}
    else:
        assert sut.slacks[0] == before  # the adaptive clock starts sleeping, with the thread's own slack
    assert int(_prctl()(PR_GET_TIMERSLACK, 0, 0, 0, 0)) == before


def test_a_shorter_interval_already_set_is_kept() -> None:
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.0001)
        with short_switch_interval():
            assert sys.getswitchinterval() == pytest.approx(0.0001)
        assert sys.getswitchinterval() == pytest.approx(0.0001)
    finally:
        sys.setswitchinterval(before)
