"""Issue 34 §1 and 33 §5: the openai SUT connects and warms up before the timed part.

The server here is a stub of its own (standard library, one thread per connection) listening with
an accept backlog of 1 and accepting slowly, the kind where a burst of connects inside a run cost
requests seconds of TTFT. It records, in order, each connection it accepted and each request
(its prompt), so the tests read what happened before the first timed request from the server's
side, and the SUT's report says from the client's side whether any request waited for a connect.
No assertion depends on time.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.clients.llm_dataset import LLMSample
from proctor.clients.openai import from_params
from proctor.clients.openai_config import OpenAIConfig
from proctor.clients.preflight import PROBE_PROMPT
from proctor.clients.warmup import WarmUp, is_warm, warm_body, warm_id, warm_index, warm_sample
from proctor.loadgen.engine import run_test
from proctor.loadgen.logs.detail import WARMUP_KEY
from proctor.loadgen.logs.reader import read_detail
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import Scenario, TestMode

TOKENS = 4


@dataclass
class Stub:
    port: int = 0
    events: list[tuple[str, int, str]] = field(default_factory=list)  # ("accept", conn, "") / ("request", conn, prompt)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, kind: str, conn: int, prompt: str = "") -> None:
        with self.lock:
            self.events.append((kind, conn, prompt))


def _answer(prompt: str, fail: Callable[[str], bool]) -> bytes:
    if fail(prompt):
        return b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nnope"
    events = [{"choices": [{"index": 0, "text": f"t{k} "}]} for k in range(TOKENS)]
    events.append({"choices": [{"index": 0, "text": "", "finish_reason": "length"}]})
    events.append({"choices": [], "usage": {"completion_tokens": TOKENS}})
    body = b"".join(b"data: " + orjson.dumps(e) + b"\n\n" for e in events) + b"data: [DONE]\n\n"
    return (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            + b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))


def _serve(stub: Stub, conn: socket.socket, k: int, fail: Callable[[str], bool]) -> None:
    buf = b""
    with conn:
        while True:
            while b"\r\n\r\n" not in buf:
                got = conn.recv(65536)
                if not got:
                    return
                buf += got
            head, _, buf = buf.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            while len(buf) < length:
                got = conn.recv(65536)
                if not got:
                    return
                buf += got
            body, buf = buf[:length], buf[length:]
            if head.startswith(b"GET"):  # the preflight's /v1/models
                models = orjson.dumps({"data": [{"id": "stub", "owned_by": "stub"}]})
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(models), models))
                continue
            prompt = str(orjson.loads(body).get("prompt"))
            stub.note("probe" if prompt == PROBE_PROMPT else "request", k, prompt)  # the preflight's probe: not the run's
            conn.sendall(_answer(prompt, fail))


@contextmanager
def slow_accept_stub(fail: Callable[[str], bool] = lambda _: False) -> Iterator[Stub]:
    """A stub that listens with a backlog of 1 and sleeps 20 ms after each accept."""
    stub = Stub()
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(1)
    stub.port = lsock.getsockname()[1]
    stop = threading.Event()

    def accept() -> None:
        k = 0
        while not stop.is_set():
            try:
                conn, _ = lsock.accept()
            except OSError:
                return
            stub.note("accept", k)
            threading.Thread(target=_serve, args=(stub, conn, k, fail), daemon=True).start()
            k += 1
            time.sleep(0.02)

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        yield stub
    finally:
        stop.set()
        lsock.close()
        t.join(timeout=5)


def sut_for(stub: Stub, **kw: str):
    params = {"url": f"http://127.0.0.1:{stub.port}", "model": "stub", "synthetic": "32", "in": "const:6",
              "out": f"const:{TOKENS}", "warm": "2", **kw}
    return from_params(**params)


def closed_loop(tmp_path, sut, qsl, n: int):
    settings = TestSettings(scenario=Scenario.SINGLE_STREAM, mode=TestMode.PERFORMANCE_ONLY,
                            use_token_latencies=True, min_duration_ms=300, min_query_count=48,
                            single_stream_expected_latency_ns=20_000)  # queries enough for any stub speed
    try:
        return run_test(sut, qsl, settings, LogSettings(LogOutputSettings(outdir=str(tmp_path))),
                        audit_config=None, timeout_s=60, concurrency=n)
    finally:
        sut.close()


def timed_prompts(qsl) -> set[str]:
    return {s.prompt for s in qsl.samples}


def test_a_closed_loop_connects_every_stream_and_warms_up_before_the_timed_part(tmp_path):
    n = 8
    with slow_accept_stub() as stub:
        sut, qsl = sut_for(stub)
        prompts = timed_prompts(qsl)
        out = closed_loop(tmp_path, sut, qsl, n)
    ev = stub.events
    first_timed = next(k for k, (kind, _, p) in enumerate(ev) if kind == "request" and p in prompts)
    before = ev[:first_timed]
    # the server accepted a connection per stream, and served one warm-up request per stream, before the
    # first timed request
    assert sum(kind == "accept" for kind, _, _ in before) >= n
    warm = [p for kind, _, p in ev if kind == "request" and p not in prompts]
    assert len(warm) == n and all(kind != "request" or p not in prompts for kind, _, p in before)
    assert all(p[::-1] in prompts for p in warm)  # reversed prompts: no timed prompt was sent early
    # no timed request waited for a connect; the warm-up is in no result
    report = sut.report()
    assert any(line.endswith(", 0 while a request waited") for line in report), report
    timed = sum(kind == "request" and p in prompts for kind, _, p in ev)
    assert out.records.n_samples_issued == timed and out.errors == 0
    assert not sut.faults and sum(sut.count_sources.values()) == timed
    assert sut.lateness_ns.__len__() == timed
    line = next(x for x in report if x.startswith("warm-up: "))
    assert f"{n} requests" in line and line.endswith("not timed") and out.warmup == line
    # the detail log says so, before the performance phase began
    detail = read_detail(tmp_path / "mlperf_log_detail.txt")
    keys = [e.key for e in detail.entries]
    assert detail.values[WARMUP_KEY] == line
    perf = next(k for k, e in enumerate(detail.entries) if e.value == "Starting performance mode")
    assert keys.index(WARMUP_KEY) < perf


def test_without_the_warm_up_a_closed_loop_pays_connects_in_the_timed_part(tmp_path):
    """The control: warmup=0 and a run that does not say its in-flight count (Server) leaves the
    connects to the requests, which the report counts (the check above can fail)."""
    with slow_accept_stub() as stub:
        sut, qsl = sut_for(stub, warmup="0", concurrency="8")
        settings = TestSettings(scenario=Scenario.OFFLINE, mode=TestMode.PERFORMANCE_ONLY, use_token_latencies=True,
                                min_duration_ms=100, min_query_count=16, offline_expected_qps=16)
        try:
            run_test(sut, qsl, settings, LogSettings(LogOutputSettings(outdir=str(tmp_path))), audit_config=None,
                     timeout_s=60)
        finally:
            sut.close()
    report = sut.report()
    waited = next(x for x in report if x.startswith("connections: "))
    assert not waited.endswith(", 0 while a request waited"), report
    assert not any(x.startswith("warm-up") for x in report)


@pytest.mark.parametrize("kw", [{"http": "aiohttp"}, {"procs": "2"}], ids=["aiohttp", "procs"])
def test_warmup_requests_on_every_path_stay_out_of_the_results(tmp_path, kw):
    with slow_accept_stub() as stub:
        sut, qsl = sut_for(stub, warmup="5", **kw)
        prompts = timed_prompts(qsl)
        settings = TestSettings(scenario=Scenario.SERVER, mode=TestMode.PERFORMANCE_ONLY, use_token_latencies=True,
                                min_duration_ms=200, min_query_count=12, server_target_qps=40)
        try:
            out = run_test(sut, qsl, settings, LogSettings(LogOutputSettings(outdir=str(tmp_path))),
                           audit_config=None, timeout_s=60)
        finally:
            sut.close()
    reqs = [p for kind, _, p in stub.events if kind == "request"]
    warm = [p for p in reqs if p not in prompts]
    assert len(warm) == 5 and reqs[:5] == warm  # all before the first timed one
    assert out.records.n_samples_issued == len(reqs) - 5 and out.errors == 0 and not sut.faults
    assert sum(sut.count_sources.values()) == len(reqs) - 5
    assert any(x.startswith("warm-up: 5 requests") for x in sut.report())


def test_warmup_faults_are_the_warm_ups_not_the_runs(tmp_path):
    with slow_accept_stub(fail=lambda p: p.startswith("dlrow")) as stub:  # a reversed "... world" prompt
        sut, qsl = from_params(url=f"http://127.0.0.1:{stub.port}", model="stub", dataset=_dataset(tmp_path),
                               warmup="3", max_tokens=str(TOKENS))
        settings = TestSettings(scenario=Scenario.SERVER, mode=TestMode.PERFORMANCE_ONLY, use_token_latencies=True,
                                min_duration_ms=100, min_query_count=8, server_target_qps=40)
        try:
            out = run_test(sut, qsl, settings, LogSettings(LogOutputSettings(outdir=str(tmp_path))),
                           audit_config=None, timeout_s=60)
        finally:
            sut.close()
    line = next(x for x in sut.report() if x.startswith("warm-up: "))
    assert "failed: http_error 3" in line
    assert not sut.faults and out.errors == 0 and out.records.n_samples_issued >= 8


def _dataset(tmp_path) -> str:
    path = tmp_path / "d.jsonl"
    path.write_text("".join(orjson.dumps({"prompt": f"hello {k} world"}).decode() + "\n" for k in range(4)))
    return str(path)


def test_warmup_seconds_keep_sending_until_they_passed(tmp_path):
    with slow_accept_stub() as stub:
        sut, qsl = sut_for(stub, warmup="0", warmup_s="0.3")
        try:
            line = sut.warm_up(0)
        finally:
            sut.close()
    sent = sum(kind == "request" for kind, _, _ in stub.events)
    assert sent >= 1 and line.startswith(f"warm-up: {sent} requests in ") and line.endswith("not timed")


def test_no_warmup_asked_and_no_streams_known_says_nothing(tmp_path):
    with slow_accept_stub() as stub:
        sut, _ = sut_for(stub)
        try:
            assert sut.warm_up(0) == "" and sut.warm_up(1) == ""
        finally:
            sut.close()
    assert not any(kind == "request" for kind, _, _ in stub.events)


# --- the pure parts -----------------------------------------------------------------------------------


def test_warm_ids_and_indices_are_negative_and_cycle_the_samples():
    assert [warm_id(k) for k in range(3)] == [-1, -2, -3] and all(is_warm(warm_id(k)) for k in range(100))
    assert [warm_index(k, 3) for k in range(5)] == [-1, -2, -3, -1, -2]
    assert not is_warm(0)


@given(st.text(max_size=64), st.lists(st.integers(0, 2**31 - 1), max_size=64))
def test_a_warm_sample_keeps_the_length_and_reverses_the_prompt(text, ids):
    s = warm_sample(LLMSample(prompt=text, output="o", max_tokens=3))
    assert s.prompt == text[::-1] and len(s.prompt) == len(text) and s.output == "o" and s.max_tokens == 3
    t = warm_sample(LLMSample(input_ids=tuple(ids)))
    assert t.input_ids == tuple(reversed(ids)) and t.prompt is None


def test_a_warm_body_asks_what_the_sample_asks_with_the_prompt_reversed():
    cfg = OpenAIConfig(urls=("http://127.0.0.1:1",), model="m", max_tokens=7)
    samples = [LLMSample(prompt="abc"), LLMSample(input_ids=(1, 2, 3), max_tokens=5)]
    a, b = orjson.loads(warm_body(cfg, samples, -1)), orjson.loads(warm_body(cfg, samples, -2))
    assert a["prompt"] == "cba" and a["max_tokens"] == 7
    assert b["prompt"] == [3, 2, 1] and b["max_tokens"] == 5
    assert orjson.loads(warm_body(cfg, samples, -3))["prompt"] == "cba"


def test_the_warm_up_keeps_its_streams_in_flight_and_counts_each_outcome():
    issued: list[list[tuple[int, int]]] = []
    w: WarmUp

    def issue(batch: list[tuple[int, int]]) -> None:
        issued.append(batch)
        for i, _ in batch:  # settles at once: the next batch comes only after these ended
            threading.Thread(target=w.settled, args=(i, "http_error" if i == -2 else None)).start()

    w = WarmUp(issue, n_samples=2, requests=5, seconds=0.0, streams=2)
    w.run(wait_s=10)
    assert sum(len(b) for b in issued) == 5 and all(len(b) <= 2 for b in issued)
    assert w.completed == 4 and w.faults == {"http_error": 1} and w.left == 0
    assert [i for b in issued for i, _ in b] == [-1, -2, -3, -4, -5]
    w.settled(-1, None)  # a stray outcome after the end changes nothing
    assert w.completed == 4


def test_a_sweep_closed_loop_point_says_it_warmed_up(tmp_path):
    from proctor.app import sweep as sw
    from proctor.app.session import RunRequest

    with slow_accept_stub() as stub:
        spec = (f"openai:url=http://127.0.0.1:{stub.port},model=stub,synthetic=16,in=const:6,out=const:{TOKENS},"
                "warm=1")
        request = RunRequest(scenario=Scenario.SINGLE_STREAM, sut=spec, model="llama3_1-8b", duration_ms=200,
                             trace=False, output_dir=tmp_path)
        point = sw.point_runner(request)("concurrency", 4.0, tmp_path / "c4")
    assert point.valid is None and point.samples > 0
    assert "; warm-up: 3 connections opened ahead, 4 requests in " in point.verdict and "not timed" in point.verdict


def test_under_the_official_loadgen_the_warm_up_comes_before_start_test(tmp_path):
    pytest.importorskip("mlperf_loadgen")
    from proctor.compat.official_engine import run_official

    with slow_accept_stub() as stub:
        sut, qsl = sut_for(stub, warmup="3")
        prompts = timed_prompts(qsl)
        settings = TestSettings(scenario=Scenario.SERVER, mode=TestMode.PERFORMANCE_ONLY, use_token_latencies=True,
                                min_duration_ms=200, min_query_count=12, server_target_qps=40)
        try:
            out = run_official(sut, qsl, settings, LogSettings(LogOutputSettings(outdir=str(tmp_path))),
                               audit_config=None)
        finally:
            sut.close()
    reqs = [p for kind, _, p in stub.events if kind == "request"]
    assert [p in prompts for p in reqs[:3]] == [False] * 3 and all(p in prompts for p in reqs[3:])
    assert out.warmup.startswith("warm-up: 3 requests") and not sut.faults
    assert read_detail(tmp_path / "mlperf_log_detail.txt").values[WARMUP_KEY] == out.warmup


def test_the_warm_up_does_not_wait_out_a_request_the_server_never_answers(monkeypatch):
    """One request never ends (its connection was never accepted): once the others ended, the wait
    stops LAG_FACTOR x the longest of them (at least LAG_MIN_S) after the last one, not at wait_s
    (an hour: were the rule broken, this test would hang there rather than pass)."""
    from proctor.clients import warmup as wu

    monkeypatch.setattr(wu, "LAG_MIN_S", 0.05)
    w: WarmUp

    def issue(batch: list[tuple[int, int]]) -> None:
        for i, _ in batch:
            if i != -3:
                threading.Thread(target=w.settled, args=(i, None)).start()

    w = WarmUp(issue, n_samples=4, requests=4, seconds=0.0, streams=4)
    w.run(wait_s=3600)
    assert w.completed == 3 and w.left == 1 and not w.faults
    assert "1 not answered in time" in w.line(0)
    w.settled(-3, "stall")  # its late end is the warm-up's, already counted as left
    assert not w.faults and w.completed == 3


def test_the_warm_up_line_never_says_more_in_flight_than_requests_sent():
    """warmup=3 with 4 streams: 3 requests cannot have had 4 in flight (the line said the stream limit)."""
    w: WarmUp

    def issue(batch: list[tuple[int, int]]) -> None:
        for i, _ in batch:
            threading.Thread(target=w.settled, args=(i, None)).start()

    w = WarmUp(issue, n_samples=4, requests=3, seconds=0.0, streams=4)
    w.run(wait_s=10)
    assert w.sent == 3 and w.peak == 3
    assert "warm-up: 3 requests in " in w.line(0) and "(3 in flight)" in w.line(0)
    assert "4 in flight" not in w.line(0)
