"""The openai SUT started with a sink completes through it, on both transports and both process
layouts; the transports stamp each request's hops into named fields (`RequestTimes`)."""

from __future__ import annotations

import socket

import pytest
from test_openai_sut import Scenario, run, synth  # tests/llm is on sys.path

from proctor.clients.openai import from_params
from proctor.clients.stream import RequestTimes
from proctor.loadgen import completion
from proctor.loadgen.completion import ForwardingSink
from proctor.loadgen.sink import CompletionSink, ReportingSUT, StartableSUT
from proctor.loadgen.types import QuerySample
from tests.support.recording_sink import RecordingSink

WAIT_S = 60  # a bound on waiting for the streams, never a measured duration


@pytest.mark.parametrize("procs", ["0", "2"])
def test_a_started_sut_completes_through_its_sink(llm_server, http, procs):
    ids = [(7 << 32) + k for k in range(6)]
    sink = RecordingSink(len(ids))
    assert isinstance(sink, CompletionSink)
    late = completion.late_completions
    with llm_server(ttft_ms=2, tpot_ms=1, chunk=(1, 2)) as server:
        sut, _ = synth(server, n=6, out=5, http=http, procs=procs)
        try:
            assert isinstance(sut, StartableSUT) and isinstance(sut, ReportingSUT)
            assert isinstance(sut.sink, ForwardingSink)  # until the engine hands one over
            sut.start(sink)
            sut.issue_query([QuerySample(i, k) for k, i in enumerate(ids)])
            assert sink.ended.wait(WAIT_S)
            lines = sut.report()
        finally:
            sut.close()
    assert not sink.fails and not sink.failures and not sink.arrays
    assert sorted(c[0] for c in sink.completes) == ids
    assert all(c[2] == 5 and c[1] for c in sink.completes)  # token counts and the output text
    assert sorted(f[0] for f in sink.firsts) == ids
    stamped = procs != "0" or http == "raw"  # workers stamp every event; raw stamps at the socket
    assert all((f[2] is not None) == stamped for f in sink.firsts)
    assert all((c[3] is not None) == stamped for c in sink.completes)
    if stamped:
        first = {f[0]: f[2] for f in sink.firsts}
        assert all(first[c[0]] <= c[3] for c in sink.completes)
    assert completion.late_completions == late  # nothing went through the module-level functions
    assert lines[0] == "token counts from: usage 6" and "faults: none" in lines


def test_a_started_sut_fails_through_its_sink(http):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sut, _ = from_params(url=f"http://127.0.0.1:{port}", synthetic="3", connect_s="2", http=http, preflight="0")
    sink = RecordingSink(3)
    try:
        sut.start(sink)
        sut.issue_query([QuerySample(i, i) for i in range(3)])
        assert sink.ended.wait(WAIT_S)
    finally:
        sut.close()
    assert sorted(i for ids, _ in sink.fails for i in ids) == [0, 1, 2]
    assert all("openai SUT: connect:" in reason for _, reason in sink.fails)
    assert not sink.completes and sut.faults == {"connect": 3}


def test_each_request_hops_are_stamped_in_order(tmp_path, llm_server, http):
    with llm_server(ttft_ms=5, tpot_ms=1) as server:
        sut, qsl = synth(server, n=16, out=4, http=http)
        times = sut.record_times()
        out = run(tmp_path, sut, qsl, Scenario.OFFLINE, min_query_count=16)
    n = out.records.n_samples_issued
    assert out.errors == 0 and len(times) == n
    hops = ["issued", "queued", "started", "sent", "head", "first_byte", "first_token", "done"]
    if http == "raw":
        hops = [h for h in hops if h not in ("queued", "started")]
    for rt in times.values():
        assert isinstance(rt, RequestTimes)
        stamps = [getattr(rt, h) for h in hops]
        assert all(stamps) and stamps == sorted(stamps), rt
        if http == "raw":
            assert rt.sent <= rt.written
        else:
            assert rt.written == 0  # not a hop of the aiohttp transport


def test_nothing_is_stamped_unless_recorded(tmp_path, llm_server, http):
    with llm_server(ttft_ms=2, tpot_ms=1) as server:
        sut, qsl = synth(server, n=8, out=2, http=http)
        out = run(tmp_path, sut, qsl, Scenario.OFFLINE, min_query_count=8)
    assert out.errors == 0 and sut.times is None and sut.client is not None and sut.client.times is None
    assert len(sut.lateness_ns) == out.records.n_samples_issued  # the report's lateness still counted
