"""The test server's precise emission: deadline logic on a fake clock, no timed assertions."""

from __future__ import annotations

import asyncio
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.serving import precise
from proctor.serving.llm_server import LLMServer, ServerOptions, emission_plan
from proctor.serving.precise import LatenessHist, PreciseTimer, StampedProtocol


class Clock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def loop():
    lp = asyncio.new_event_loop()
    yield lp
    lp.close()


def timer(loop, clock, lead=0.001):
    return PreciseTimer(loop, clock=clock, timerfd=False, lead_s=lead)


def test_deadlines_resolve_in_order_at_or_after_their_time_never_before(loop):
    clock = Clock(100.0)
    t = timer(loop, clock)
    f3, f1, f2 = t.wait(100.030), t.wait(100.010), t.wait(100.020)
    assert t.armed == pytest.approx(100.009)  # woken one lead before the earliest
    clock.t = 100.0095
    t._on_fd()  # inside the lead: spinning, nothing due yet
    assert t._spinning and not f1.done()
    clock.t = 100.0099999
    t._tick()
    assert not f1.done()  # never early
    clock.t = 100.010
    t._tick()
    assert f1.done() and not f2.done() and not f3.done()
    assert t.armed == pytest.approx(100.019) and not t._spinning
    clock.t = 100.0295  # a late wake: everything due is resolved at once, in order
    t._on_fd()
    assert f2.done() and not f3.done() and t._spinning  # f3 is within the lead now
    clock.t = 100.030
    t._tick()
    assert f3.done() and not t._heap


def test_an_earlier_deadline_rearms_and_a_cancelled_one_is_skipped(loop):
    clock = Clock(5.0)
    t = timer(loop, clock)
    late = t.wait(5.5)
    assert t.armed == pytest.approx(5.499)
    early = t.wait(5.1)
    assert t.armed == pytest.approx(5.099)
    early.cancel()  # the client left
    clock.t = 5.099
    t._on_fd()
    clock.t = 5.1
    t._tick()
    assert t.armed == pytest.approx(5.499) and not late.done()


def test_a_past_deadline_is_ready_at_once(loop):
    t = timer(loop, Clock(7.0))
    assert t.wait(6.0).done() and t.wait(7.0).done() and t.armed is None


def test_spinning_stops_past_its_share_of_a_second(loop):
    clock = Clock(1.0)
    t = timer(loop, clock, lead=0.001)
    t.spin_s = precise.MAX_SPIN_FRACTION  # this second's budget is spent
    t._window = 1.0
    t.wait(1.5)
    assert t.armed == pytest.approx(1.5)  # the timer alone, no lead
    clock.t = 2.1  # a new second: the lead is back
    t.wait(2.6)
    t._on_fd()  # 1.5 has passed: resolved, then the next is armed one lead early
    assert t.armed == pytest.approx(2.599)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="timerfd is Linux only")
def test_timerfd_wakes_a_running_loop():
    async def main() -> tuple[str, float, float]:
        lp = asyncio.get_running_loop()
        t = PreciseTimer(lp)
        deadline = lp.time() + 0.005
        await t.wait(deadline)
        done, kind = lp.time(), t.kind
        t.close()
        return kind, deadline, done

    kind, deadline, done = asyncio.run(main())
    assert kind == "timerfd" and done >= deadline


def test_emission_plan_counts_each_deadline_from_t0():
    plan = emission_plan(1.0, 0.004, [1, 2, 3])
    assert [g for _, g in plan] == [1, 2, 3]
    assert [d for d, _ in plan] == pytest.approx([1.0, 1.008, 1.020])  # last token of each chunk


@given(n=st.integers(1, 300), lo=st.integers(1, 5), extra=st.integers(0, 5), arrival=st.floats(0, 1e6),
       prompt=st.lists(st.integers(0, 1023), max_size=20))
def test_server_plan_covers_every_token_once_with_rising_deadlines(n, lo, extra, arrival, prompt):
    server = LLMServer(ServerOptions(ttft_ms=40, tpot_ms=4, chunk=(lo, lo + extra)))
    plan = server.plan(prompt, n, arrival)
    assert sum(g for _, g in plan) == n
    assert plan[0][1] == 1 and plan[0][0] == pytest.approx(arrival + 0.040)
    deadlines = [d for d, _ in plan]
    assert deadlines == sorted(deadlines) and deadlines[-1] == pytest.approx(arrival + 0.040 + (n - 1) * 0.004)
    assert all(lo <= g <= lo + extra for _, g in plan[1:-1])


def test_token_groups_are_the_reference_in_plan_order():
    server = LLMServer(ServerOptions(ttft_ms=40, tpot_ms=4, chunk=(2, 5), seed=4))
    prompt = server.model.encode("ba be bi bo")

    async def groups() -> list[tuple[float, list[int]]]:
        return [item async for item in server._token_groups(prompt, 37, 10.0)]

    got = asyncio.run(groups())
    assert [t for _, g in got for t in g] == server.model.generate(prompt, 37)
    assert [d for d, _ in got] == sorted(d for d, _ in got) and got[0][0] == pytest.approx(10.040)
    assert server.model.generate(prompt, 37)[:5] == server.model.generate(prompt, 5)


def test_remembered_outputs_equal_fresh_ones():
    from proctor.serving.llm_server import MEMO_TOKENS, TinyLM

    memo, fresh = TinyLM(seed=2), TinyLM(seed=2)
    for prompt, n in (([5, 6, 7], 10), ([1, 5, 6, 7], 30), ([9], 4), ([5, 6, 7], 20)):
        assert memo.generate(prompt, n) == fresh.generate(prompt, n)
        fresh._memo.clear()
    assert len(memo._memo[(5, 6, 7)]) == 30
    long = memo.tokens([5, 6, 7])
    assert long.upto(MEMO_TOKENS + 5)[:30] == memo.generate([5, 6, 7], 30)
    assert not long.shared and len(memo._memo[(5, 6, 7)]) == 30  # a long output is not remembered


def test_lateness_percentiles_and_early_writes():
    h = LatenessHist()
    for us in range(1, 101):
        h.add(us * 1e-6 - 0.5e-6)
    h.add(-1e-6)
    h.add(0.5)  # past the last bucket
    s = h.summary()
    assert s["n"] == 102 and s["early"] == 1 and s["p50_us"] == 50 and s["p99_us"] == 100
    assert s["max_us"] == pytest.approx(5e5)
    assert h.percentiles((100,)) == [pytest.approx(5e5)]
    assert LatenessHist().summary() == {"n": 0, "p50_us": None, "p90_us": None, "p99_us": None, "max_us": 0.0,
                                        "early": 0}


class Inner(asyncio.Protocol):
    def __init__(self) -> None:
        self.got: list[bytes] = []

    def data_received(self, data: bytes) -> None:
        self.got.append(data)


def test_stamp_is_the_first_byte_of_a_request_until_rearmed():
    reg: dict = {}
    inner = Inner()
    p = StampedProtocol(inner, reg)
    p.connection_made(object())  # type: ignore[arg-type]
    assert reg and p.rx is None
    p.data_received(b"POST / HTTP/1.1\r\n")
    first = p.rx
    p.data_received(b"body")
    assert p.rx == first and inner.got == [b"POST / HTTP/1.1\r\n", b"body"]
    p.rearm()
    p.data_received(b"GET")
    assert p.rx is not None and p.rx >= first
    p.connection_lost(None)
    assert not reg


def test_server_reports_its_own_lateness_per_write(llm_server):
    import urllib.request

    import orjson

    def call(path: str, body: dict | None = None) -> bytes:
        req = urllib.request.Request(f"http://127.0.0.1:{server.port}{path}", method="POST" if body is not None
                                     else "GET", data=orjson.dumps(body) if body else b"" if body is not None else None)
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.read()

    with llm_server(ttft_ms=2, tpot_ms=1, chunk=(2, 2)) as server:
        for _ in range(3):
            out = call("/v1/completions", {"prompt": "ba be", "max_tokens": 5, "stream": True})
            assert out.count(b'"text":" ') == 3  # 1 + 2 + 2 tokens
        rep = orjson.loads(call("/stats/lateness"))
        assert rep["first"]["n"] == 3 and rep["later"]["n"] == 6
        assert rep["first"]["early"] == rep["later"]["early"] == 0
        assert rep["timer"] == ("timerfd" if sys.platform.startswith("linux") else "loop")
        call("/stats/reset", {})
        assert orjson.loads(call("/stats/lateness"))["first"]["n"] == 0
        assert "first chunk p50" in server.lateness_line()


@pytest.mark.fuzz
@given(deadlines=st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30),
       steps=st.lists(st.floats(0, 0.2, allow_nan=False), min_size=1, max_size=30),
       cancel=st.lists(st.booleans(), max_size=30), lead=st.sampled_from([0.0, 0.0003, 0.0015]))
def test_timer_never_resolves_early_never_misses_a_deadline(deadlines, steps, cancel, lead):
    lp = asyncio.new_event_loop()
    try:
        clock = Clock(0.0)
        t = PreciseTimer(lp, clock=clock, timerfd=False, lead_s=lead)
        futs = [(d, t.wait(d)) for d in deadlines]
        for (_, f), c in zip(futs, cancel, strict=False):
            if c and not f.done():
                f.cancel()
        for dt in steps:
            clock.t += dt
            t._tick()  # what the wake (timerfd, call_at or a spin pass) runs
            for d, f in futs:
                if not f.cancelled():
                    assert f.done() == (d <= clock.t)  # none early, none due left waiting
            pending = [d for d, f in futs if not f.done()]
            if pending:  # the next wake is never after the earliest live deadline
                assert t._spinning or (t.armed is not None and t.armed <= min(pending))
    finally:
        lp.close()


def test_a_huge_request_is_planned_one_chunk_at_a_time():
    """Issue 22 class 6: a request's emission plan is made as it streams, so one asking for a
    billion tokens costs the event loop a few chunks' work per step, not the whole plan at arrival."""
    import itertools

    server = LLMServer(ServerOptions(ttft_ms=40, tpot_ms=4, chunk=(1, 1)))
    plan = server.iter_plan([1, 2, 3], 10**9, 0.0)
    first = list(itertools.islice(plan, 3))
    assert [g for _, g in first] == [1, 1, 1]
    assert [d for d, _ in first] == pytest.approx([0.040, 0.044, 0.048])


def test_the_same_arrivals_give_the_same_chunks():
    plans = []
    for _ in range(2):
        server = LLMServer(ServerOptions(ttft_ms=1, tpot_ms=1, chunk=(1, 7), seed=5))
        a, b = server.iter_plan([1], 50, 0.0), server.iter_plan([2], 50, 0.0)
        plans.append(([g for _, g in b], [g for _, g in a]))  # consumed in another order than made
    assert plans[0] == plans[1]
