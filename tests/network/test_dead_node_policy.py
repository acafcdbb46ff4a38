"""What the QDL does with a node that stops answering (issue 31 §3), against scripted fake nodes on
loopback: a request a node left unanswered (connection closed with no answer) goes to a live node;
`DOWN_AFTER` of them in a row and the node is down, said in one log line whatever the number of
requests it drops; a node that answers wrongly is not dead, its samples fail (one line, then
counted); with no node live the run ends at once, incomplete, saying so."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from proctor.clients.network import DOWN_AFTER, from_params
from proctor.errors import RunError
from proctor.loadgen import LogOutputSettings, LogSettings, Scenario, TestMode, TestSettings, run_test
from proctor.wire import kserve_v2 as v2
from tests.network.test_hostile_node import _http, _node, _tensor_response
from tests.support.hostile_http import hostile_server

CHUNK = 16
SAMPLES = 6400  # 400 requests of CHUNK: half of them to a dead node, far more than DOWN_AFTER


def honest(req: bytes, n: int) -> bytes:
    return _tensor_response(v2.Tensor.of("label", np.ones((n, 1), np.int32)))


def dead(req: bytes, n: int) -> bytes:
    raise ConnectionResetError  # the fake server closes the connection without an answer


def broken(req: bytes, n: int) -> bytes:
    return _http(b'{"error": "the model crashed"}', {"Content-Type": "application/json"},
                 "500 Internal Server Error")


class DropsFirst:
    """Closes the connection on its first `k` inference requests, then answers honestly."""

    def __init__(self, k: int) -> None:
        self.k = k

    def __call__(self, req: bytes, n: int) -> bytes:
        if self.k > 0:
            self.k -= 1
            raise ConnectionResetError
        return honest(req, n)


def _run(tmp_path, *behaviours):
    servers = [hostile_server(_node(b)) for b in behaviours]
    states = [s.__enter__() for s in servers]
    try:
        urls = "|".join(f"http://127.0.0.1:{s.port}" for s in states)
        sut, qsl = from_params(node=urls, qsl="synthetic", total=str(SAMPLES), perf=str(SAMPLES), chunk=str(CHUNK))
        try:
            ts = TestSettings(scenario=Scenario.OFFLINE, mode=TestMode.PERFORMANCE_ONLY, min_duration_ms=10,
                              min_query_count=1, offline_expected_qps=SAMPLES / 0.011)
            log = LogSettings(log_output=LogOutputSettings(outdir=str(tmp_path)), enable_trace=False)
            try:
                out = run_test(sut, qsl, ts, log, audit_config=None, timeout_s=60)
            except RunError as exc:  # every node died while the query was still being issued
                out = exc
        finally:
            sut.close()
    finally:
        for s in reversed(servers):
            s.__exit__(None, None, None)
    return sut, out


def _lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "proctor.clients.network"]


def test_a_dead_nodes_samples_are_answered_by_the_live_one_and_it_is_said_once(tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    sut, out = _run(tmp_path, dead, honest)
    issued = out.records.n_samples_issued
    assert issued >= SAMPLES // 2 and not out.incomplete
    assert out.result.failed_samples == 0 and out.errors == 0 and sut.lost == {}
    d, live = sut.nodes
    assert (d.alive, live.alive) == (False, True) and d.samples == 0 and live.samples == issued
    assert sut.redispatched == {d.url: d.redispatched} and d.redispatched >= DOWN_AFTER * CHUNK
    lines = _lines(caplog)
    assert len(lines) == 1, lines  # one line, however many requests the dead node dropped
    assert lines[0].startswith(f"network SUT: node {d.name} ({d.url}) is down at t=")
    assert f"{DOWN_AFTER} requests in a row unanswered" in lines[0] and "re-dispatched to 1 live node(s)" in lines[0]
    assert sut.report()[0].endswith(f"{d.redispatched:,} of its samples re-dispatched to live nodes, none failed")


def test_a_node_that_answers_wrongly_is_not_dead_and_its_samples_fail(tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    sut, out = _run(tmp_path, broken, honest)
    bad, good = sut.nodes
    assert bad.alive and good.alive and sut.redispatched == {} and not out.incomplete and not out.valid
    assert bad.failed_requests > 1 and sut.lost == {bad.url: bad.lost}
    assert out.result.failed_samples == bad.lost and good.samples + bad.lost == out.records.n_samples_issued
    lines = _lines(caplog)
    assert len(lines) == 1, lines  # the first failure; the rest are counted in the report
    assert "failed a request" in lines[0] and "HTTP 500" in lines[0]
    assert any(f"LOST {bad.lost} samples in {bad.failed_requests} requests" in x for x in sut.report())


def test_with_every_node_dead_the_run_ends_at_once_saying_so(tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    sut, out = _run(tmp_path, dead, dead)
    assert not any(x.alive for x in sut.nodes)
    assert sut.down.startswith("network SUT: every node is down (") and "the run stopped" in sut.down
    if isinstance(out, RunError):  # raised by an issue_query after the last node died
        assert "every node is down" in str(out)
    elif out.incomplete:  # aborted while samples were open
        assert "every node is down" in out.incomplete_reason
    else:  # every sample had failed by the time the abort was seen
        assert out.result.failed_samples == out.records.n_samples_issued and not out.valid
    assert sut.down.removeprefix("network SUT: ") in sut.report()
    assert len(_lines(caplog)) == 2  # one line per node
    assert sum(x.samples for x in sut.nodes) == 0


@pytest.mark.parametrize("drops", [1, DOWN_AFTER - 1])
def test_fewer_than_down_after_dropped_requests_do_not_take_a_node_down(tmp_path, caplog, drops):
    """A stale kept-alive connection (or two) closed under a request: the request goes again, the node
    stays up, nothing fails (one node: the request goes back to it)."""
    caplog.set_level(logging.WARNING)
    sut, out = _run(tmp_path, DropsFirst(drops))
    [node] = sut.nodes
    assert node.alive and sut.down == "" and _lines(caplog) == []
    assert out.result.failed_samples == 0 and not out.incomplete and node.samples == out.records.n_samples_issued
    assert sut.redispatched == {node.url: drops * CHUNK}
