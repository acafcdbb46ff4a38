"""Server early stopping follows the rules' procedure, step 4 included (Inference rules, appendix
"Early stopping", "Early Stopping Criterion"): past the official queries proctor's engine runs more of
the same seeded schedule until q >= n, or stops at a bound with INVALID naming how many more were
needed. Manual clock, SUTs that complete inline at a chosen latency: no timed assertions."""

from __future__ import annotations

import numpy as np
import pytest

from proctor.loadgen import completion
from proctor.loadgen import early_stopping as es
from proctor.loadgen.clock import ManualClock
from proctor.loadgen.early_stopping_extension import EXTENSION_MAX_QUERIES, ExtensionWatch, extension_queries
from proctor.loadgen.engine import RunOutcome, run_test
from proctor.loadgen.logs.reader import read_detail
from proctor.loadgen.normalize import normalize
from proctor.loadgen.records import Records
from proctor.loadgen.schedule import generate_schedule, loadable_sets
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import Scenario, TestMode
from proctor.suts.synthetic import InMemoryQSL

MS = 1_000_000
TARGET_NS = 10 * MS
OFFICIAL = 600  # min_query_count: the official schedule has exactly this many queries
N_ONE_LATE = es.server_required_queries(1, 0.99)  # 662: one query over latency needs this many


class LatencySUT:
    """Completes sample `seq` `latency(seq)` ns after its issue on the manual clock: at once when 0,
    else at the first issue call (or the flush) at or past that time, stamped with it."""

    name = "latency-sut"

    def __init__(self, clock: ManualClock, latency) -> None:  # latency: query seq -> ns
        self.clock, self.latency = clock, latency
        self.seq = 0
        self.pending: list[tuple[int, int]] = []  # (due, id), in issue order

    def _release(self, now: int) -> None:
        due = [p for p in self.pending if p[0] <= now]
        self.pending = [p for p in self.pending if p[0] > now]
        for t, i in sorted(due):
            completion.complete_arrays(np.array([i], np.int64), t_ns=t)

    def issue_query_arrays(self, ids: np.ndarray, indices: np.ndarray) -> None:
        now = self.clock.now_ns()
        self._release(now)
        for i in ids.tolist():
            lat = self.latency(self.seq)
            self.seq += 1
            if lat:
                self.pending.append((now + lat, i))
            else:
                completion.complete_arrays(np.array([i], np.int64), t_ns=now)

    def flush_queries(self) -> None:
        if self.pending:
            last = max(t for t, _ in self.pending)
            self.clock.sleep_until(last)
            self._release(last)


def server(**kw: object) -> TestSettings:
    base: dict[str, object] = dict(
        scenario=Scenario.SERVER,
        mode=TestMode.PERFORMANCE_ONLY,
        min_duration_ms=50,
        min_query_count=OFFICIAL,
        server_target_qps=2000.0,
        server_target_latency_ns=TARGET_NS,
    )
    base.update(kw)
    return TestSettings(**base)  # type: ignore[arg-type]


def run(tmp_path, latency, settings: TestSettings | None = None, **kw) -> RunOutcome:
    clock = ManualClock()
    logs = LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path)), enable_trace=False)
    return run_test(
        LatencySUT(clock, latency), InMemoryQSL(64, 16), settings or server(), logs, audit_config=None,
        clock=clock, **kw,
    )


def test_one_late_query_just_below_n_extends_the_run_until_the_criterion_holds(tmp_path):
    out = run(tmp_path, lambda q: 20 * MS if q == 5 else 0)
    r = out.result
    assert r is not None and out.valid and r.early_stopping_met
    assert r.overlatency_count == 1
    assert r.query_count == N_ONE_LATE == 662  # step 4: n - q = 62 more queries, then step 3 holds
    assert (r.early_stopping_nominal_queries, r.early_stopping_extra_queries) == (OFFICIAL, 62)
    assert r.early_stopping_extension_stop == "met"
    assert out.issue_stop_reason == "early_stopping_met"
    assert out.records.n_queries_issued == 662
    summary = out.log_paths["summary"].read_text()
    assert "Early stopping met after 62 extra queries (rules' procedure, step 4)." in summary
    assert "Result is : VALID" in summary
    log = read_detail(out.log_paths["detail"])
    assert log.get("generated_query_count") == OFFICIAL  # the official count, as the official logs it
    assert log.get("result_query_count") == 662
    assert log.get("proctor_early_stopping_extra_queries") == 62
    assert log.get("early_stopping_met") is True


def test_the_extension_keeps_the_official_queries_and_their_times(tmp_path):
    """The extra queries continue the same seeded schedule: the official ones are unchanged."""
    a = run(tmp_path / "a", lambda q: 20 * MS if q == 5 else 0)
    b = run(tmp_path / "b", lambda q: 20 * MS if q == 5 else 0, early_stopping_extension=False)
    assert b.records.n_queries_issued == OFFICIAL and b.result is not None and not b.result.early_stopping_met
    assert np.array_equal(a.schedule.scheduled_ns[:OFFICIAL], b.schedule.scheduled_ns)
    assert np.array_equal(a.schedule.sample_index[:OFFICIAL], b.schedule.sample_index)
    assert np.all(np.diff(a.schedule.scheduled_ns) >= 0)


def test_without_the_extension_the_run_stops_where_the_official_does(tmp_path):
    out = run(tmp_path, lambda q: 20 * MS if q == 5 else 0, early_stopping_extension=False)
    r = out.result
    assert r is not None and not out.valid and not r.early_stopping_met
    assert r.query_count == OFFICIAL and r.early_stopping_nominal_queries == 0
    assert "Would need to run at least 62 more queries" in out.log_paths["summary"].read_text()


def test_a_run_that_meets_the_criterion_at_the_schedule_end_is_unchanged(tmp_path):
    out = run(tmp_path, lambda q: 0)  # t = 0: n = 459 <= 600
    r = out.result
    assert r is not None and out.valid
    assert r.query_count == OFFICIAL and r.early_stopping_extra_queries == 0
    assert r.early_stopping_extension_stop == "met_at_schedule_end"
    assert "extra queries" not in out.log_paths["summary"].read_text()


def test_an_always_late_sut_ends_at_the_bound_invalid_naming_how_many_more(tmp_path):
    out = run(tmp_path, lambda q: 20 * MS)
    r = out.result
    assert r is not None and not out.valid and not r.early_stopping_met
    # the bound: as many queries again as the official schedule has (EXTENSION_MAX_QUERIES above that)
    assert r.query_count == 2 * OFFICIAL and r.early_stopping_extra_queries == OFFICIAL
    assert r.early_stopping_extension_stop == "bound"
    need = es.server_required_queries(2 * OFFICIAL, 0.99)
    assert r.early_stopping_needed == need
    summary = out.log_paths["summary"].read_text()
    assert f"Ran {OFFICIAL} extra queries (rules' procedure, step 4) and stopped at" in summary
    assert f"{need - 2 * OFFICIAL} more queries were needed." in summary
    assert any("Early Stopping Criterion, step 4" in x and f"short of the {need}" in x for x in r.reasons)


def test_max_duration_ends_the_extension(tmp_path):
    out = run(tmp_path, lambda q: 20 * MS, server(max_duration_ms=400))
    r = out.result
    assert r is not None and not out.valid
    assert OFFICIAL < r.query_count < 2 * OFFICIAL
    assert r.early_stopping_extension_stop == "max_duration"
    assert out.issue_stop_reason == "max_duration"


def test_max_query_count_caps_the_extra_queries():
    eff = normalize(server(max_query_count=650), 64, 16)
    assert extension_queries(eff, OFFICIAL, TestMode.PERFORMANCE_ONLY) == 50
    eff = normalize(server(), 64, 16)
    assert extension_queries(eff, 10 * EXTENSION_MAX_QUERIES, TestMode.PERFORMANCE_ONLY) == EXTENSION_MAX_QUERIES
    assert extension_queries(eff, OFFICIAL, TestMode.ACCURACY_ONLY) == 0
    offline = normalize(server(scenario=Scenario.OFFLINE, offline_expected_qps=100.0), 64, 16)
    assert extension_queries(offline, OFFICIAL, TestMode.PERFORMANCE_ONLY) == 0


def test_queries_in_flight_count_as_over_latency_until_they_complete():
    """Once extending, issuing stops only when the criterion holds even if every query in flight
    ends over latency; at the schedule's end only known over-latency queries start the extension."""
    eff = normalize(server(), 64, 16)
    loaded = loadable_sets(eff, 64, TestMode.PERFORMANCE_ONLY)[0]
    sched = generate_schedule(eff, loaded, TestMode.PERFORMANCE_ONLY, extra_queries=lambda n: n)
    assert (sched.n_nominal, sched.n_queries) == (OFFICIAL, 2 * OFFICIAL)
    rec = Records.allocate(sched, tokens=False)
    rec.query_scheduled_ns[:] = sched.scheduled_ns
    rec.sample_done_ns[:] = sched.scheduled_ns + MS
    rec.sample_done_ns[5] = sched.scheduled_ns[5] + 20 * MS  # one over latency: n = 662
    watch = ExtensionWatch(eff, rec, OFFICIAL)
    assert watch.check(OFFICIAL - 1, 0) is None and not watch.extending
    now = int(sched.scheduled_ns[OFFICIAL - 1])
    assert watch.check(OFFICIAL, now) is None and watch.extending  # 600 < 662
    assert watch.needed_at_schedule_end == N_ONE_LATE
    rec.sample_done_ns[650:662] = -1  # 12 still in flight, younger than the bound
    now = int(sched.scheduled_ns[661])
    assert watch.check(662, now) is None  # worst case: 13 over latency, n = f(13) + 13 > 662
    rec.sample_done_ns[650:662] = sched.scheduled_ns[650:662] + MS
    assert watch.check(662, now) == "met"


@pytest.mark.parametrize("extra", [0, 7, 600])
def test_extra_queries_never_change_the_official_schedule(extra):
    eff = normalize(server(), 64, 16)
    loaded = loadable_sets(eff, 64, TestMode.PERFORMANCE_ONLY)[0]
    base = generate_schedule(eff, loaded, TestMode.PERFORMANCE_ONLY)
    ext = generate_schedule(eff, loaded, TestMode.PERFORMANCE_ONLY, extra_queries=lambda n: extra)
    assert ext.n_queries == base.n_queries + extra and ext.nominal_queries == base.n_queries
    assert ext.duration_ns == base.duration_ns
    assert np.array_equal(ext.scheduled_ns[: base.n_queries], base.scheduled_ns)
    assert np.array_equal(ext.sample_index[: base.n_samples], base.sample_index)
    assert np.array_equal(ext.accuracy_log_mask[: base.n_samples], base.accuracy_log_mask)


def test_token_runs_extend_for_ttft_and_tpot_alike():
    """Interactive / LLM Server: the procedure counts TTFT and TPOT over their bounds separately
    (official: TPOT first, then TTFT); each needs q >= f(t) + t."""
    eff = normalize(
        server(use_token_latencies=True, server_ttft_latency=10 * MS, server_tpot_latency=MS), 64, 16
    )
    loaded = loadable_sets(eff, 64, TestMode.PERFORMANCE_ONLY)[0]
    sched = generate_schedule(eff, loaded, TestMode.PERFORMANCE_ONLY, extra_queries=lambda n: n)
    rec = Records.allocate(sched, tokens=True)
    rec.query_scheduled_ns[:] = sched.scheduled_ns
    rec.sample_first_token_ns[:] = sched.scheduled_ns + MS
    rec.sample_n_tokens[:] = 11
    rec.sample_done_ns[:] = sched.scheduled_ns + 6 * MS  # TPOT (6 - 1) / 10 = 0.5 ms
    rec.sample_done_ns[7] = sched.scheduled_ns[7] + 21 * MS  # TPOT 2 ms: over its bound
    rec.sample_first_token_ns[9] = sched.scheduled_ns[9] + 11 * MS  # TTFT 11 ms: over its bound
    rec.sample_done_ns[9] = sched.scheduled_ns[9] + 16 * MS
    watch = ExtensionWatch(eff, rec, OFFICIAL)
    now = int(sched.scheduled_ns[-1])
    assert watch.check(OFFICIAL, now) is None and watch.needed_at_schedule_end == N_ONE_LATE
    assert watch.check(N_ONE_LATE - 1, now) is None
    assert watch.check(N_ONE_LATE, now) == "met"
