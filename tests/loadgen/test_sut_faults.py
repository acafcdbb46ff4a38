"""Issue 31 §2: every SUT fault is classified where it happens (the completion tracker), said at once
(the first of each kind, one line), ranked so the verdict's first line is the true cause, and a run
whose answers can never complete what was issued stops instead of waiting out the stuck limit; an
honest slow SUT is never stopped. Tracker-level tests are exact (manual clock, the watch driven look
by look); the in-process runs assert on values, never on how long they took."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.app.session import verdict
from proctor.cli.live_progress import format_snapshot
from proctor.errors import RunError
from proctor.loadgen import completion, sut_faults
from proctor.loadgen.clock import ManualClock
from proctor.loadgen.completion import ID_GENERATION_BITS, CompletionTracker
from proctor.loadgen.engine import RunOutcome, run_test
from proctor.loadgen.progress import Snapshot
from proctor.loadgen.records import Records, Schedule
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.sink import CompletionSink
from proctor.loadgen.sut_faults import FAULTS, Fault, FaultKind, FaultTally
from proctor.loadgen.types import QuerySample, QuerySampleResponse, Scenario, TestMode
from proctor.loadgen.watch import PhaseWatch
from proctor.suts.synthetic import InMemoryQSL

BASE = 3 << ID_GENERATION_BITS  # the phase's id base (generation 3)
S = 1_000_000_000


def tracker(n: int = 4, *, base: int = BASE, notices: list[str] | None = None) -> CompletionTracker:
    """n one-sample queries, all issued; QSL indices 100 + k (so an index is never an id)."""
    sched = Schedule(
        scheduled_ns=np.arange(n, dtype=np.int64),
        query_offsets=np.arange(n + 1, dtype=np.int64),
        sample_index=np.arange(100, 100 + n, dtype=np.int64),
    )
    clock = ManualClock(10)
    rec = Records.allocate(sched, 10, tokens=False)
    tally = FaultTally(None if notices is None else notices.append)
    tr = CompletionTracker(sched, rec, clock.now_ns, log_all_data=False, use_tokens=False,
                           needs_first_token=False, id_base=base, sut_faults=tally)
    rec.query_issued_ns[:] = 10
    tr.issued_end = n
    return tr


def counts(tr: CompletionTracker) -> dict[str, int]:
    return {str(f.kind): f.count for f in tr.sut_faults.ranked()}


# --- classification ---------------------------------------------------------------------------------


def test_each_kind_of_misdirected_answer_is_named_once_then_counted():
    said: list[str] = []
    tr = tracker(4, notices=said)
    R = QuerySampleResponse
    tr.complete([R(BASE + 0), R(BASE + 0), R(BASE + 0)])  # twice, and again
    tr.complete([R(101), R(7)])  # 101 is the QSL index of issued sample 1; 7 is nothing
    tr.complete([R((2 << ID_GENERATION_BITS) + 1)])  # an id of the phase before
    tr.complete([R(1.5), "not a response"])  # type: ignore[list-item]
    tr.fail([BASE + 2], "HTTP 500")
    tr.complete([R(BASE + 2)])  # completed after it failed
    assert counts(tr) == {"unknown_id": 2, "not_an_id": 2, "stale_id": 1, "after_fail": 1, "duplicate": 2,
                          "failed": 1}
    assert [f.kind for f in tr.sut_faults.ranked()] == [
        FaultKind.UNKNOWN_ID, FaultKind.NOT_AN_ID, FaultKind.STALE_ID, FaultKind.AFTER_FAIL, FaultKind.DUPLICATE,
        FaultKind.FAILED,
    ]
    assert len(said) == 6 and all(line.endswith("later ones are counted") for line in said)
    unknown = tr.sut_faults.ranked()[0]
    assert unknown.detail == "101" and "QSL index of an issued sample" in unknown.cause
    assert "sample.index where sample.id belongs" in said[1]
    assert tr.completed_samples == 2  # sample 0, and sample 2 by its failure


def test_the_array_path_classifies_the_same_way():
    tr = tracker(40)
    ids = np.arange(BASE, BASE + 20, dtype=np.int64)
    tr.complete_arrays(ids)
    stale = (2 << ID_GENERATION_BITS) + 1  # the phase before's
    tr.complete_arrays(np.concatenate([ids[:18], np.array([5, stale, 6], np.int64)]))  # 18 twice, 2 unknown
    assert counts(tr) == {"unknown_id": 2, "stale_id": 1, "duplicate": 18}
    assert tr.completed_samples == 20


def test_first_token_errors_are_named_but_are_no_misdirected_completions():
    tr = tracker(2)
    tr.first_token([QuerySampleResponse(5)])
    assert counts(tr) == {"unknown_id": 1}
    assert tr.misdirected() == (0, 2)  # a first token completes nothing either way


def test_misdirected_counts_answers_since_the_last_completion():
    tr = tracker(3)
    R = QuerySampleResponse
    tr.complete([R(1), R(2)])
    assert tr.misdirected() == (2, 3)
    tr.complete([R(BASE)])  # a real completion: the evidence starts again
    assert tr.misdirected() == (0, 2)
    tr.complete([R(9)])
    assert tr.misdirected() == (1, 2)


ITEM = st.one_of(
    st.integers(0, 5).map(lambda k: ("issued", k)),  # an issued sample's id
    st.integers(-3, 1 << 34).map(lambda k: ("int", k)),  # any integer: unknown or stale unless it is issued
    st.sampled_from([1.0, "7", None, b"x", True]).map(lambda v: ("junk", v)),
)


@given(st.lists(st.lists(ITEM, max_size=6), max_size=8), st.booleans())
def test_any_answers_are_counted_exactly_and_never_raise(calls, arrays):
    """Whatever a SUT passes: every answer is a completion, a counted fault of one kind, or both
    never; the counts add up to what was passed."""
    tr = tracker(6)
    first: set[int] = set()
    expect = {"completed": 0, "dup": 0, "bad_int": 0, "junk": 0}
    for call in calls:
        ids: list[Any] = []
        for kind, v in call:
            if kind == "issued":
                ids.append(BASE + v)
                expect["dup" if v in first else "completed"] += 1
                first.add(v)
            elif kind == "int":
                ids.append(v)
                if BASE <= v < BASE + 6:  # drawn onto an issued id
                    expect["dup" if v - BASE in first else "completed"] += 1
                    first.add(v - BASE)
                else:
                    expect["bad_int"] += 1
            else:
                ids.append(v)
                expect["junk"] += 1
        if arrays and all(type(i) is int for i in ids):
            tr.complete_arrays(np.asarray(ids, dtype=np.int64) if ids else np.zeros(0, np.int64))
        else:
            tr.complete([i if kind == "junk" else QuerySampleResponse(i) for i, (kind, _) in zip(ids, call, strict=True)])
    got = counts(tr)
    assert tr.completed_samples == expect["completed"]
    assert got.get("duplicate", 0) == expect["dup"]
    assert got.get("unknown_id", 0) + got.get("stale_id", 0) == expect["bad_int"]
    assert got.get("not_an_id", 0) == expect["junk"]


# --- the watch: said at once, stopped only on conclusive evidence -------------------------------------


def watch(tr: CompletionTracker, said: list[str], bound_s: float = 3.0) -> PhaseWatch:
    tr.sut_faults = FaultTally(said.append)
    return PhaseWatch(tr, tr.sut_faults, bound_s, "proctor gives up after 60 s (--timeout-s)")


def test_nothing_completed_is_said_once_per_stall_with_what_to_check():
    tr = tracker(2)
    said: list[str] = []
    w = watch(tr, said)
    for t in (0, 1, 2, 2.9):
        assert w.look(int(t * S))
    assert said == [] and tr.waiting_s == 0
    assert w.look(3 * S) and w.look(4 * S)
    assert len(said) == 1 and "nothing has completed in 3 s (2 sample(s) issued, none completed)" in said[0]
    assert "QuerySampleResponse(sample.id)" in said[0] and "--timeout-s" in said[0]
    assert tr.waiting_s == 4.0
    tr.complete([QuerySampleResponse(BASE)])  # it moves: the wait is over, a later stall is a new one
    assert w.look(5 * S) and tr.waiting_s == 0
    assert w.look(9 * S) and tr.sut_faults.times("stall") == 2
    assert "in the last 4 s (1 of 2 issued samples outstanding, 1 completed)" not in said[0]


def test_answers_that_are_never_issued_ids_end_the_run_after_the_bound():
    tr = tracker(2)
    said: list[str] = []
    w = watch(tr, said)
    assert w.look(0)
    tr.complete([QuerySampleResponse(100), QuerySampleResponse(101)])  # sample.index for both
    assert w.look(1 * S) and not tr.abort_reason
    assert w.look(3 * S) and not tr.abort_reason  # 2 s of evidence: under the 3 s bound
    assert not w.look(4 * S)
    assert tr.abort_kind is FaultKind.UNKNOWN_ID
    assert "last 2 answer(s) were ids never issued, and none completed the 2 sample(s) left open" in tr.abort_reason
    assert not any("nothing has completed" in line for line in said)  # the unknown id's own line said it


def test_an_honest_slow_sut_is_never_stopped():
    tr = tracker(2)
    w = watch(tr, [])
    for t in range(0, 600, 7):  # ten minutes without a completion: said, never aborted
        assert w.look(t * S)
    assert not tr.abort_reason and tr.waiting_s > 500


def test_one_real_completion_resets_the_evidence():
    tr = tracker(3)
    w = watch(tr, [])
    assert w.look(0)
    tr.complete([QuerySampleResponse(7), QuerySampleResponse(8), QuerySampleResponse(9)])
    assert w.look(2 * S)
    tr.complete([QuerySampleResponse(BASE + 1)])  # the SUT answers properly after all
    for t in range(3, 30):
        assert w.look(t * S)
    assert not tr.abort_reason


def test_an_abort_releases_an_issuer_waiting_on_its_query():
    tr = tracker(2)
    tr.await_query(0)
    got: list[bool] = []
    waiter = threading.Thread(target=lambda: got.append(tr.gate.acquire(True, 30)))
    waiter.start()
    tr.abort("stop", FaultKind.UNKNOWN_ID)
    waiter.join(timeout=30)
    assert got == [True] and tr.abort_reason == "stop"
    tr.abort("again")  # the first reason stands; nothing is released twice
    assert tr.abort_reason == "stop" and tr.abort_kind is FaultKind.UNKNOWN_ID


# --- runs through the engine: the outcome carries the ranked faults -------------------------------------


class IndexSUT:
    """Answers with sample.index from its own thread (optionally one real completion first)."""

    def __init__(self, real_first: int = 0) -> None:
        self.real_first = real_first
        self.sink: CompletionSink | None = None

    def start(self, sink: CompletionSink) -> None:
        self.sink = sink

    def issue_query(self, samples: list[QuerySample]) -> None:
        def work() -> None:
            for s in samples:
                assert self.sink is not None
                real = self.real_first > 0
                self.real_first -= 1
                self.sink.complete([QuerySampleResponse(s.id if real else s.index)])

        threading.Thread(target=work, daemon=True).start()

    def flush_queries(self) -> None:
        pass


class SlowSUT:
    """Completes each sample properly after `delay_s`, from its own thread."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s

    def issue_query(self, samples: list[QuerySample]) -> None:
        def work() -> None:
            time.sleep(self.delay_s)
            completion.query_samples_complete([QuerySampleResponse(s.id) for s in samples])

        threading.Thread(target=work, daemon=True).start()

    def flush_queries(self) -> None:
        pass


@pytest.fixture
def short_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sut_faults, "NOTICE_MIN_S", 0.3)
    monkeypatch.setattr(sut_faults, "NOTICE_FACTOR", 0.0)


def single_stream(tmp_path: Path, sut: Any, n: int = 8, **kw: Any) -> RunOutcome:
    ts = TestSettings(scenario=Scenario.SINGLE_STREAM, mode=TestMode.PERFORMANCE_ONLY, min_duration_ms=1,
                      min_query_count=n, single_stream_expected_latency_ns=1_000_000)
    logs = LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path)), enable_trace=False)
    return run_test(sut, InMemoryQSL(64, 64), ts, logs, audit_config=None, **kw)


def test_a_run_answered_with_indices_stops_and_names_the_cause_first(tmp_path, short_bound):
    out = single_stream(tmp_path, IndexSUT(), timeout_s=600)
    assert out.incomplete and "were ids never issued" in out.incomplete_reason
    assert out.records is not None and out.records.n_queries_issued == 1  # nothing issued after the stop
    assert [f.kind for f in out.faults] == [FaultKind.UNKNOWN_ID]
    ok, lines = verdict(out)
    assert not ok and lines[0].startswith("INCOMPLETE: the SUT completed 1 response id(s) that were never issued")
    assert "QuerySampleResponse(sample.id)" in lines[0]
    assert not any("--expected-latency-ms" in line or "--target-qps" in line for line in lines)


def test_a_slow_honest_sut_finishes_though_the_wait_was_said(tmp_path, short_bound):
    notices: list[str] = []

    class Hooks:
        def on_notice(self, line: str) -> None:
            notices.append(line)

        def __getattr__(self, name: str) -> Any:
            return lambda *a, **k: None

    out = single_stream(tmp_path, SlowSUT(0.6), n=3, progress=Hooks())  # type: ignore[arg-type]
    assert not out.incomplete and out.faults == []
    assert out.result is not None and out.result.sample_count == 3
    assert any(line.startswith("waiting for the SUT: nothing has completed") for line in notices)


def test_a_stray_unknown_id_among_real_completions_is_a_fault_not_a_stop(tmp_path, short_bound):
    class Stray(SlowSUT):
        def issue_query(self, samples: list[QuerySample]) -> None:
            completion.query_samples_complete([QuerySampleResponse(999_999)])
            super().issue_query(samples)

    out = single_stream(tmp_path, Stray(0.01), n=5)
    assert not out.incomplete
    assert [(f.kind, f.count) for f in out.faults] == [(FaultKind.UNKNOWN_ID, 5)]
    ok, lines = verdict(out)
    assert not ok and lines[0].startswith("INVALID: the SUT completed 5 response id(s) that were never issued")


# --- the verdict: the true cause first, advice only where it follows ------------------------------------


def test_the_rank_puts_what_ended_the_run_first_and_the_stuck_limit_last():
    kinds = [c.kind for c in FAULTS]
    assert kinds[0] is FaultKind.RAISED and kinds[-1] is FaultKind.STALLED
    assert kinds.index(FaultKind.UNKNOWN_ID) < kinds.index(FaultKind.DUPLICATE) < kinds.index(FaultKind.FAILED)
    tally = FaultTally()
    tally.add(FaultKind.STALLED, "gave up")
    tally.add(FaultKind.DUPLICATE, "12", 3)
    tally.add(FaultKind.ABORTED, "endpoint gone")
    assert [f.kind for f in tally.ranked()] == [FaultKind.ABORTED, FaultKind.DUPLICATE, FaultKind.STALLED]
    assert tally.count_lines() == ["in all, the SUT completed 3 sample(s) twice (first: response id 12)"]
    assert Fault(FaultKind.STALLED, 1, "x", advice_override="do y").line == "x: do y"


def test_the_progress_line_says_it_waits_instead_of_a_growing_eta():
    snap = Snapshot(50.0, 1, 1, 0, 0.0, {}, 100, 4950.0, waiting_s=47.0)
    line = format_snapshot(snap, "PerformanceOnly")
    assert "waiting for the SUT: nothing completed in 47 s" in line and "ETA" not in line
    unknown = Snapshot(0.5, 1, 1, 0, 0.0, {}, None, float("inf"))
    assert "ETA unknown until a query completes" in format_snapshot(unknown, "PerformanceOnly")


# --- the advice names the options as the caller does (issue 32 item 5) ---------------------------------


class SilentSUT:
    """Completes its first `answered` samples at once, then none (a hang)."""

    def __init__(self, answered: int = 0) -> None:
        self.answered = answered

    def issue_query(self, samples: list[QuerySample]) -> None:
        done = [QuerySampleResponse(s.id) for s in samples[: max(self.answered, 0)]]
        self.answered -= len(done)
        if done:
            completion.query_samples_complete(done)

    def flush_queries(self) -> None:
        pass


class CrashingSUT:
    def issue_query(self, samples: list[QuerySample]) -> None:
        raise RuntimeError("model crashed")

    def flush_queries(self) -> None:
        pass


def _raised(tmp_path: Path, **kw: Any) -> tuple[RunOutcome, BaseException | None]:
    with pytest.raises(RunError) as info:
        single_stream(tmp_path, CrashingSUT(), **kw)
    outcome = info.value.outcome
    assert isinstance(outcome, RunOutcome)
    return outcome, info.value.__cause__


@pytest.mark.parametrize("answered", [0, 1])  # none completed (the class's advice), or a hang after one
def test_a_stalled_run_names_the_stuck_limit_as_the_caller_sets_it(tmp_path, answered):
    """A library run (no labels) is told the option it sets, `timeout_s`; `proctor run`'s labels name
    the flag, and nothing else in the verdict differs."""
    from proctor.cli.run_options import SETTING_FLAGS

    library = single_stream(tmp_path / "lib", SilentSUT(answered), timeout_s=0.2)
    cli = single_stream(tmp_path / "cli", SilentSUT(answered), timeout_s=0.2, labels=SETTING_FLAGS)
    lines = [verdict(out)[1][0] for out in (library, cli)]
    assert all(line.startswith("INCOMPLETE: the SUT did not complete ") for line in lines), lines
    assert "proctor gives up after timeout_s 0.2 s" in lines[0] and lines[0].endswith("needs a longer timeout_s")
    assert "proctor gives up after --timeout-s 0.2 s" in lines[1] and lines[1].endswith("needs a longer --timeout-s")
    assert not re.search(r"(?<![\w-])--[a-z]", lines[0]), lines[0]
    def masked(line: str) -> str:  # the idle seconds and the phase's response ids differ between runs
        return re.sub(r"\d+", "N", line)

    assert masked(lines[1].replace("--timeout-s", "timeout_s")) == masked(lines[0])


def test_a_raising_sut_is_told_where_its_traceback_is(tmp_path):
    """Without labels the traceback is on the exception the run raised (RunError, chained to the SUT's:
    true, checked here); `proctor run` hands the words for its own way, --debug."""
    from proctor.cli.run_options import SETTING_FLAGS

    outcome, cause = _raised(tmp_path / "lib")
    assert isinstance(cause, RuntimeError) and cause.__traceback__ is not None
    ok, lines = verdict(outcome)
    assert not ok and lines[0].endswith(": fix the SUT (the exception the run raised shows its traceback)"), lines[0]
    outcome, _ = _raised(tmp_path / "cli", labels=SETTING_FLAGS)
    assert verdict(outcome)[1][0].endswith(": fix the SUT (`proctor --debug run ...` shows its traceback)")


def test_every_class_advice_is_rendered_whole_with_or_without_labels():
    """No placeholder is left in any class's advice, and without labels none names a flag."""
    from proctor.cli.run_options import SETTING_FLAGS
    from proctor.loadgen.option_names import OptionNames

    for names in (OptionNames(), OptionNames(SETTING_FLAGS)):
        for c in FAULTS:
            text = c.advice_for(names)
            assert "{" not in text and "}" not in text, text
            assert bool(re.search(r"(?<![\w-])--[a-z]", text)) == (bool(names.labels) and c.kind in (
                FaultKind.RAISED, FaultKind.STALLED)), text
    tally = FaultTally(names=OptionNames(SETTING_FLAGS))
    tally.add(FaultKind.STALLED, "gave up")
    [fault] = tally.ranked()
    assert fault.line.endswith("a SUT this slow needs a longer --timeout-s")
