"""The openai SUT with worker processes (`procs=N`) against `proctor serve llm` on loopback.

Same outputs and token counts as the in-process path; TTFT from the workers' t_ns stamps with the
same one-sided bounds as the in-process tests; a killed worker loses only its outstanding samples.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import threading
import time

import numpy as np
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_openai_sut import MS, NOT_SET, Scenario, TestMode, run, synth, url  # tests/llm is on sys.path

from proctor.clients.openai import from_params
from proctor.clients.openai_procs import COUNT_CHUNKS, LOGGED, REQUEST, PipeSink, WorkerPool, _Worker
from proctor.clients.request_export import SOURCES, RequestLog
from proctor.clients.stream import FAULT_KINDS, Endpoint
from proctor.clients.tally import Tally
from proctor.errors import ConfigError
from proctor.serving.llm_server import TinyLM


def _accuracy_entries(path):
    """The accuracy log's entries by QSL index, without the run-specific sequence ids."""
    return {e["qsl_idx"]: {k: v for k, v in e.items() if k != "seq_id"} for e in orjson.loads(path.read_bytes())}


def test_two_workers_give_the_in_process_outputs_and_counts(tmp_path, llm_server, http):
    model = TinyLM()
    prompts = [f"sample {k} " + " ".join(model.words[(5 * k + j) % 40] for j in range(k % 7 + 1)) for k in range(16)]
    data = tmp_path / "data.jsonl"
    data.write_bytes(b"\n".join(orjson.dumps({"prompt": p, "max_tokens": 3 + k % 6}) for k, p in enumerate(prompts)))
    logs = {}
    with llm_server(ttft_ms=2, tpot_ms=1, chunk=(1, 3)) as server:
        for procs in ("0", "2"):
            sut, qsl = from_params(url=url(server), dataset=str(data), api="chat", procs=procs, http=http)
            out = run(tmp_path / procs, sut, qsl, Scenario.OFFLINE, TestMode.ACCURACY_ONLY)
            assert out.errors == 0 and out.accuracy_samples == 16 and not sut.faults
            assert sut.count_sources == {"usage": 16}
            logs[procs] = _accuracy_entries(out.log_paths["accuracy"])
            assert any(line.startswith("send lateness") for line in sut.report())
    assert len(logs["2"]) == 16 and logs["2"] == logs["0"]
    assert [logs["2"][k]["token_count"] for k in range(16)] == [3 + k % 6 for k in range(16)]


def test_worker_stamps_measure_the_injected_ttft(tmp_path, llm_server, http):
    with llm_server(ttft_ms=30, tpot_ms=3, chunk=(1, 3)) as server:
        sut, qsl = synth(server, procs="2", http=http)
        out = run(tmp_path, sut, qsl)
    res, rec, n = out.result, out.records, out.records.n_samples_issued
    assert out.errors == 0 and not out.incomplete and n >= 16
    assert np.all(rec.sample_n_tokens[:n] == 8)
    # floors only, as test_openai_sut (a loaded host only adds time; accuracy is the bench's figure)
    assert np.all(rec.sample_first_token_ns[:n] != NOT_SET)
    assert res.ttft.min >= 30 * MS and res.samples.min >= (30 + 7 * 3) * MS
    assert 0 < res.tpot.min <= res.tpot.percentiles[0.5] <= (res.samples.max - res.ttft.min) // 7
    assert sut.count_sources == {"usage": n} and not sut.faults
    lines = sut.report()
    assert "worker processes: 2" in lines
    assert any(line.startswith(f"send lateness (request sent - engine issue) over {n} requests") for line in lines)


def test_a_killed_worker_loses_only_its_outstanding_samples(tmp_path, llm_server):
    # TTFT 3 s: nothing completes before the kill, which follows the one Offline issue at once
    with llm_server(ttft_ms=3000, tpot_ms=1) as server:
        sut, qsl = synth(server, n=8, out=4, procs="2")
        pool = sut.pool
        victim = pool.workers[0]

        def kill_when_issued() -> None:
            for _ in range(2000):  # bounded: 20 s
                if victim.outstanding and sum(w.outstanding for w in pool.workers) == 8:
                    os.kill(victim.proc.pid, signal.SIGKILL)
                    return
                time.sleep(0.01)

        killer = threading.Thread(target=kill_when_issued)
        killer.start()
        out = run(tmp_path, sut, qsl, Scenario.OFFLINE, min_query_count=1)
        killer.join()
    n = out.records.n_samples_issued
    assert n == 8 and not out.incomplete
    assert sut.faults == {"worker": 4} and out.result.failed_samples == 4  # fewest-outstanding: 4 each
    assert sut.count_sources == {"usage": 4} and not out.valid
    assert int(np.count_nonzero(out.records.sample_n_tokens[:n] == 4)) == 4
    assert "worker processes: 2, 1 died" in sut.report()
    assert any("worker process 0" in line and "4 outstanding sample(s) failed" in line for line in sut.report())
    assert not any(w.proc.is_alive() for w in pool.workers)  # closed: no process left behind


def test_close_leaves_no_process_and_a_dead_endpoint_still_fails_fast(tmp_path, http):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sut, qsl = from_params(url=f"http://127.0.0.1:{port}", synthetic="6", connect_s="2", procs="2", http=http,
                           preflight="0")
    procs = [w.proc for w in sut.pool.workers]
    out = run(tmp_path, sut, qsl, Scenario.OFFLINE, min_query_count=1)
    assert not out.incomplete and sut.faults == {"connect": out.records.n_samples_issued}
    assert not any(p.is_alive() for p in procs) and all(p.exitcode is not None for p in procs)


def test_a_worker_that_cannot_start_names_the_problem(tmp_path):
    with pytest.raises(ConfigError, match="tokenizer"):
        from_params(url="http://127.0.0.1:9", synthetic="2", procs="1", tokenizer=str(tmp_path / "none"),
                    preflight="0")


@pytest.mark.parametrize(("params", "words"), [({"procs": "-1"}, "procs"), ({"procs": "2", "concurrency": "1"}, "concurrency")])
def test_bad_procs_parameters(params, words):
    with pytest.raises(ConfigError, match=words):
        from_params(url="http://127.0.0.1:9", synthetic="2", **params)


def _bare_pool() -> tuple[WorkerPool, _Worker]:
    """A pool without processes: enough to apply events (no run in progress: completions are dropped)."""
    pool = WorkerPool.__new__(WorkerPool)
    pool.tally, pool.endpoints, pool._lock = Tally(), [], threading.Lock()
    pool._pending, pool.bad_events, pool.deaths = {}, 0, []
    return pool, _Worker(0, None, None, None)


_atom = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=True),
    st.text(max_size=8), st.binary(max_size=8), st.sampled_from(["T", "D", "F", "J", "R", "E"]),
)
_event = st.one_of(
    st.tuples(st.sampled_from(["T", "D", "F", "J"]), *[_atom] * 3),
    st.lists(_atom, max_size=9).map(tuple),
    st.tuples(st.just("D"), st.integers(), st.integers(), st.integers(), st.text(max_size=4), st.booleans(),
              st.one_of(st.none(), st.binary(max_size=4)), st.integers(), st.integers(), st.integers()),
    st.tuples(st.just("F"), st.integers(), st.text(max_size=4), st.text(max_size=4), st.integers(), st.integers(),
              st.integers()),
    _atom,
)


@pytest.mark.fuzz
@given(st.one_of(st.lists(_event, max_size=12), _atom, st.dictionaries(st.text(max_size=3), _atom, max_size=3)))
def test_any_event_batch_is_applied_or_counted_never_raised(batch):
    pool, w = _bare_pool()
    pool.apply(w, batch)
    shaped = isinstance(batch, list)
    assert pool.bad_events <= (len(batch) if shaped else 1)
    assert pool.tally.junk_events >= 0 or any(isinstance(e, tuple) and e[:1] == ("J",) for e in batch)


def test_known_events_update_the_tally_without_a_run():
    pool, w = _bare_pool()
    pool.apply(w, [("J", 3), ("D", 7, 1, 5, "usage", True, None, 0, 0, 0), ("F", 8, "http_429", "HTTP 429", 0, 0, 0),
                   ("X",)])
    t = pool.tally
    assert t.junk_events == 3 and t.count_sources == {"usage": 1} and t.count_mismatches == 1
    assert t.faults == {"http_429": 1} and pool.bad_events == 1


class _Pipe:
    """A Connection's sending side that keeps what is sent."""

    def __init__(self) -> None:
        self.sent: list = []

    def send(self, obj) -> None:
        self.sent.append(obj)

    def send_bytes(self, buf) -> None:
        self.sent.append(bytes(buf))


def test_a_worker_sends_each_outcomes_chunk_count_and_last_chunk_time():
    loop = asyncio.new_event_loop()
    try:
        conn = _Pipe()
        sink = PipeSink(conn, loop)
        for i in (5, 6):
            sink.expect(i, 10, False)
        sink.sent(5, 10, 20)
        sink.note_chunks(5, 1, 100)
        sink.note_chunks(5, 3, 130)  # the latest note is what travels
        sink.note_chunks(9, 2, 140)  # not in flight: not kept
        sink.complete(5, b"abc", 4, "usage", False, t_ns=150)
        sink.note_chunks(5, 4, 160)  # after its outcome: not kept
        sink.fail(6, 0, "dropped", "no [DONE]")  # no content chunk: 0 and 0
        sink.flush()
    finally:
        loop.close()
    assert conn.sent == [[("D", 5, 150, 4, "usage", False, None, 20, 3, 130),
                          ("F", 6, "dropped", "no [DONE]", 0, 0, 0)]]
    assert sink._chunks == sink._last_chunk == sink._sent == {}  # nothing kept past an outcome


def test_the_parent_notes_the_workers_chunk_counts_in_the_export():
    pool, w = _bare_pool()
    pool.tally.export = log = RequestLog(4)
    pool.apply(w, [("D", 1, 500, 4, "usage", False, None, 0, 3, 480), ("D", 2, 600, 1, "usage", False, None, 0, 0, 0),
                   ("F", 3, "dropped", "no [DONE]", 0, 2, 700)])
    assert pool.bad_events == 0
    assert log.column("chunks", 4).tolist() == [-1, 3, -1, 2]  # 0 chunks: not noted (null), as in-process
    assert log.column("last_chunk_ns", 4).tolist() == [0, 480, 0, 700]
    assert log.column("source", 4).tolist()[1:3] == [1 + SOURCES.index("usage")] * 2
    assert log.column("fault", 4).tolist()[3] == 1 + FAULT_KINDS.index("dropped")


@pytest.mark.parametrize("export", [False, True])
def test_the_request_record_asks_for_chunk_counts_only_while_exporting(export):
    pool, w = _bare_pool()
    pool.endpoints = [Endpoint("http://127.0.0.1:9/v1/completions")]
    w.requests, w.pid = _Pipe(), 1
    pool.workers = [w]
    if export:
        pool.tally.export = RequestLog(4)
    pool.issue([(1, 7), (2, 8)], 1000)
    (buf,) = w.requests.sent
    flags = [r[4] for r in REQUEST.iter_unpack(buf)]
    assert [r[:4] for r in REQUEST.iter_unpack(buf)] == [(1, 7, 0, 1000), (2, 8, 0, 1000)]
    assert flags == [COUNT_CHUNKS if export else 0] * 2 and not flags[0] & LOGGED
