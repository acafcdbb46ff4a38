"""The synthetic SUT and in-memory QSL: parameters, service-time draws, batching, payloads, tokens."""

from __future__ import annotations

import time

import numpy as np
import pytest

from proctor.errors import ConfigError
from proctor.loadgen import completion
from proctor.loadgen.completion import CompletionTracker
from proctor.loadgen.records import NOT_SET, Records, Schedule
from proctor.loadgen.types import QuerySample
from proctor.suts import registry
from proctor.suts.synthetic import InMemoryQSL, SyntheticParams, SyntheticSUT, from_params


def test_from_params_parses_strings():
    sut, qsl = from_params(
        service_us="250",
        dist="exp",
        workers="3",
        batch="8",
        mode="spin",
        tokens="4",
        seed="7",
        total="100",
        perf="20",
    )
    try:
        assert sut.params == SyntheticParams(
            service_us=250.0, dist="exp", workers=3, batch=8, mode="spin", tokens=4, seed=7
        )
        assert (qsl.total_sample_count, qsl.performance_sample_count) == (100, 20)
        assert "service_us=250" in sut.name and "workers=3" in sut.name
    finally:
        sut.close()


def test_registry_builds_the_synthetic_sut():
    sut, qsl = registry.build("synthetic:workers=0,total=10")
    assert (
        isinstance(sut, SyntheticSUT) and qsl.total_sample_count == 10 and qsl.performance_sample_count == 10
    )


@pytest.mark.parametrize(
    ("params", "key"),
    [
        ({"dist": "gamma"}, "dist"),
        ({"mode": "busy"}, "mode"),
        ({"workers": "x"}, "workers"),
        ({"batch": "0"}, "batch"),
        ({"tokens": "1"}, "tokens"),
        ({"colour": "red"}, "colour"),
        ({"service_us": "-1"}, "service_us"),
        ({"api": "grpc"}, "api"),
    ],
)
def test_bad_parameters_name_their_key(params, key):
    with pytest.raises(ConfigError) as info:
        from_params(**params)
    assert info.value.key == key


def test_qsl_sizes_are_checked():
    with pytest.raises(ConfigError):
        InMemoryQSL(10, 20)


@pytest.mark.parametrize("dist", ["const", "exp", "lognormal"])
def test_service_time_draws_have_the_requested_mean(dist):
    sut = SyntheticSUT(SyntheticParams(service_us=100.0, dist=dist, workers=0, seed=3))
    draws = np.array([sut._service_ns() for _ in range(20000)])
    assert draws.mean() == pytest.approx(100_000, rel=0.03)
    if dist == "const":
        assert np.all(draws == 100_000)
    else:
        assert draws.std() > 10_000
        again = SyntheticSUT(SyntheticParams(service_us=100.0, dist=dist, workers=0, seed=3))
        assert [again._service_ns() for _ in range(5)] == draws[:5].tolist()  # seeded


def schedule_of(n_queries: int, per_query: int, total: int = 64) -> Schedule:
    n = n_queries * per_query
    return Schedule(
        scheduled_ns=np.zeros(n_queries, np.int64),
        query_offsets=np.arange(0, n + 1, per_query, dtype=np.int64),
        sample_index=(np.arange(n, dtype=np.int64) * 7) % total,
    )


def attached(schedule: Schedule, *, tokens: bool = False, log_all: bool = True):
    records = Records.allocate(schedule)
    logged: list[tuple[int, int, bytes, int]] = []
    tracker = CompletionTracker(
        schedule,
        records,
        time.perf_counter_ns,
        log_all_data=log_all,
        use_tokens=tokens,
        needs_first_token=tokens,
        accuracy_sink=lambda s, i, d, n, t: logged.append((s, i, d, n)),
    )
    tracker.issued_end = schedule.n_samples
    completion.attach(tracker)
    return tracker, records, logged


@pytest.mark.parametrize("api", ["arrays", "objects"])
@pytest.mark.parametrize("workers", [0, 3])
def test_every_sample_completes_once_with_its_index_as_payload(api, workers):
    sched = schedule_of(20, 5)
    tracker, records, logged = attached(sched)
    sut = SyntheticSUT(SyntheticParams(service_us=50, workers=workers, batch=4, api=api))
    try:
        issue = sut.issue_query if api == "objects" else sut.issue_query_arrays
        for q in range(sched.n_queries):
            a, b = int(sched.query_offsets[q]), int(sched.query_offsets[q + 1])
            if api == "objects":
                issue([QuerySample(i, int(sched.sample_index[i])) for i in range(a, b)])
            else:
                issue(np.arange(a, b), sched.sample_index[a:b])
        tracker.finish_issuing(sched.n_samples)
        assert tracker.all_done.wait(10)
    finally:
        completion.detach(tracker)
        sut.close()
    assert tracker.error_count == 0
    assert np.all(records.sample_done_ns != NOT_SET) and np.all(records.query_done_ns != NOT_SET)
    assert sorted(s for s, *_ in logged) == list(range(100))
    for seq, idx, data, _ in logged:
        assert idx == sched.sample_index[seq] and data == np.int64(idx).tobytes()
    assert sut.issued_samples == 100


def test_batches_never_exceed_the_batch_size(monkeypatch):
    sizes: list[int] = []
    real = completion.complete_arrays

    def spy(ids, n_tokens=None, data=None, *, t_ns=None):
        sizes.append(len(ids))
        real(ids, n_tokens, data, t_ns=t_ns)

    monkeypatch.setattr(completion, "complete_arrays", spy)
    sched = schedule_of(1, 50)
    tracker, _, _ = attached(sched, log_all=False)
    sut = SyntheticSUT(SyntheticParams(service_us=0, workers=2, batch=8))
    try:
        sut.issue_query_arrays(np.arange(50), sched.sample_index)
        tracker.finish_issuing(50)
        assert tracker.all_done.wait(10)
    finally:
        completion.detach(tracker)
        sut.close()
    assert sum(sizes) == 50 and max(sizes) <= 8 and sizes.count(8) >= 5


def test_tokens_report_first_token_before_completion():
    sched = schedule_of(6, 1)
    tracker, records, logged = attached(sched, tokens=True)
    sut = SyntheticSUT(SyntheticParams(service_us=400, workers=2, tokens=5))
    try:
        sut.issue_query_arrays(np.arange(6), sched.sample_index)
        tracker.finish_issuing(6)
        assert tracker.all_done.wait(10)
    finally:
        completion.detach(tracker)
        sut.close()
    assert tracker.error_count == 0
    assert np.all(records.sample_n_tokens == 5)
    assert np.all(records.sample_first_token_ns != NOT_SET)
    assert np.all(records.sample_first_token_ns < records.sample_done_ns)
    assert all(n == 5 for *_, n in logged)


def test_qsl_tracks_loads():
    qsl = InMemoryQSL(10, 4)
    qsl.load_samples([1, 2, 2, 3])
    qsl.unload_samples([2])
    assert qsl.loaded.tolist() == [0, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    assert qsl.ever_loaded.sum() == 3 and qsl.load_calls == [4]
