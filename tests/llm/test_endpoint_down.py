"""Journey 1 of issue 23: an LLM endpoint that is down before the run, or dies during it.

Down before: the SUT's preflight (`clients.preflight`) refuses it while the SUT is built, so
`proctor run` exits 2 with one line and writes no log. Dead during: after
`MAX_CONSECUTIVE_CONNECT_FAILURES` requests in a row could not connect, the run stops issuing and
ends incomplete, saying when the endpoint stopped answering; faults reach the console once per kind.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.clients.preflight import check_endpoints, models_url, parse_status_line
from proctor.clients.tally import MAX_CONSECUTIVE_CONNECT_FAILURES, Tally
from proctor.errors import ConfigError
from proctor.loadgen.logs.reader import read_detail
from proctor.loadgen.types import Scenario
from proctor.serving.llm_server import ServerOptions
from tests.llm.conftest import running_server
from tests.llm.test_openai_sut import run, synth

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_models_url_sits_beside_the_endpoint():
    assert models_url("http://h:1", "chat") == "http://h:1/v1/models"
    assert models_url("http://h:1/v1/", "completions") == "http://h:1/v1/models"
    assert models_url("http://h:1/api/v1/chat/completions", "chat") == "http://h:1/api/v1/models"


@given(st.binary(max_size=2048))
def test_any_answer_is_a_status_line_or_one_bounded_value_error(got):
    try:
        line = parse_status_line(got)
    except ValueError as exc:
        assert "\n" not in str(exc) and len(str(exc)) < 400
    else:
        assert line.startswith("HTTP/1.") and "\n" not in line


@pytest.mark.parametrize(
    ("got", "ok"),
    [(b"HTTP/1.1 404 Not Found\r\nx: y\r\n\r\n", True), (b"HTTP/1.0 200\n", True), (b"", False),
     (b"SSH-2.0-OpenSSH\r\n", False), (b"HTTP/2 200\r\n", False), (b"HTTP/1.1 20x OK\r\n", False)],
)
def test_status_lines(got, ok):
    if ok:
        assert parse_status_line(got).startswith("HTTP/1.")
    else:
        with pytest.raises(ValueError, match="not HTTP"):
            parse_status_line(got)


def test_preflight_names_the_url_key_and_what_was_tried():
    port = free_port()
    with pytest.raises(ConfigError) as err:
        check_endpoints((f"http://127.0.0.1:{port}",), "completions", 2.0)
    text = str(err.value)
    assert err.value.key == "url" and "connection refused" in text
    assert f"GET http://127.0.0.1:{port}/v1/models" in text and "\n" not in text


def test_preflight_refuses_a_listener_that_is_not_http():
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(4)

        def answer() -> None:
            conn, _ = srv.accept()
            with conn:
                conn.recv(4096)
                conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")

        t = threading.Thread(target=answer, daemon=True)
        t.start()
        with pytest.raises(ConfigError, match="not HTTP.*SSH-2.0"):
            check_endpoints((f"http://127.0.0.1:{srv.getsockname()[1]}",), "completions", 5.0)
        t.join(timeout=5)


def test_preflight_passes_a_live_server(llm_server):
    with llm_server() as server:
        check_endpoints((f"http://127.0.0.1:{server.port}",), "chat", 5.0)


def test_proctor_run_against_nothing_listening_exits_2_in_one_line(tmp_path):
    data = tmp_path / "prompts.jsonl"
    data.write_bytes(orjson.dumps({"prompt": "ba de ko", "max_tokens": 4}) + b"\n")
    out = tmp_path / "logs"
    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]))
    r = subprocess.run(
        [sys.executable, "-m", "proctor", "run", "--scenario", "Offline", "--model", "llama2-70b",
         "--sut", f"openai:url=http://127.0.0.1:{port},model=tiny,connect_s=2", "--dataset", str(data),
         "--quick", "--output", str(out)],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
    )
    assert r.returncode == 2, r.stdout + r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, r.stderr
    assert "url" in lines[0] and "connection refused" in lines[0] and f"127.0.0.1:{port}" in lines[0]
    assert not (out / "mlperf_log_detail.txt").exists()


class _Sink:
    def __init__(self) -> None:
        self.failed: list[int] = []
        self.aborts: list[str] = []

    def fail(self, ids, reason):
        self.failed += list(ids)

    def abort(self, reason):
        self.aborts.append(reason)
        return True


def test_consecutive_connect_faults_take_the_endpoint_for_down_once(caplog):
    tally = Tally()
    sink = tally.sink = _Sink()  # type: ignore[assignment]
    caplog.set_level(logging.WARNING, "proctor.clients.openai")
    n = MAX_CONSECUTIVE_CONNECT_FAILURES
    for i in range(n - 1):
        tally.fail(i, i, "connect", "connection refused")
    tally.note_done(999, "usage", False)  # an answer between: the streak starts again
    for i in range(n - 1):
        tally.fail(i, i, "connect", "connection refused")
    assert not tally.down and not sink.aborts
    tally.fail(n, n, "http_error", "HTTP 500")  # the endpoint answered: not a connection failure
    for i in range(n + 5):
        tally.fail(i, i, "connect", "connection refused")
    assert tally.down and len(sink.aborts) == 1 and sink.aborts[0] == tally.down
    assert "stopped answering at 20" in tally.down and f"{n} requests in a row" in tally.down
    assert tally.faults == {"connect": 3 * n + 3, "http_error": 1} and len(sink.failed) == 3 * n + 4
    per_sample = [r for r in caplog.records if "failed:" in r.getMessage()]
    assert len(per_sample) == 2  # one line per kind, not per sample


def test_a_server_killed_mid_run_ends_the_run_incomplete_at_once(tmp_path):
    # a Server run scheduled for 4,800 queries (120 s at 40 qps); the server stops after 1 s
    ctx = running_server(ServerOptions(ttft_ms=1, tpot_ms=1))
    server = ctx.__enter__()
    stopped = threading.Event()

    def stop() -> None:
        if not stopped.is_set():
            stopped.set()
            ctx.__exit__(None, None, None)

    timer = threading.Timer(1.0, stop)
    try:
        sut, qsl = synth(server, n=64, out=4)
        timer.start()
        # the same whether the engine sees the SUT's stop before its next issue or that issue raises
        # EndpointDown first (the threads' timing decides): an incomplete run, not an exception
        out = run(tmp_path, sut, qsl, Scenario.SERVER, min_duration_ms=120_000, min_query_count=4800)
    finally:
        timer.cancel()
        stop()
    assert out.incomplete and not out.valid
    reason = out.records.incomplete_reason
    assert "stopped answering at 20" in reason and "requests in a row could not connect" in reason
    detail = read_detail(tmp_path / "mlperf_log_detail.txt")
    summary = (tmp_path / "mlperf_log_summary.txt").read_text()
    assert "stopped answering" in summary and "Result is : INVALID" in summary
    assert detail.get("result_validity") == "INVALID"
    assert detail.get("result_query_count") < detail.get("generated_query_count") / 2  # not its scheduled end
    assert any("stopped answering" in str(e) for e in detail.errors)
    # the detail log's account of the connect faults adds up to the SUT's count
    text = (tmp_path / "mlperf_log_detail.txt").read_text()
    repeated = re.search(r"SUT failure repeated (\d+) more time\(s\): openai SUT: connect", text)
    first = "openai SUT: connect: cannot connect" in text
    assert first and sut.faults["connect"] >= MAX_CONSECUTIVE_CONNECT_FAILURES
    assert repeated is not None and int(repeated.group(1)) + 1 == sut.faults["connect"]


def test_an_audit_against_nothing_listening_exits_2_before_any_run(cli, tmp_path):
    data = tmp_path / "prompts.jsonl"
    data.write_bytes(orjson.dumps({"prompt": "ba de ko", "max_tokens": 4}) + b"\n")
    r = cli("audit", "all", "--scenario", "Offline", "--model", "llama2-70b", "--sut",
            f"openai:url=http://127.0.0.1:{free_port()},model=tiny", "--dataset", data,
            "--duration-ms", "100", "-o", tmp_path / "o")
    assert r.rc == 2, r.out + r.err
    assert len(r.err.strip().splitlines()) == 1 and "key 'url'" in r.err and "connection refused" in r.err
    assert not list((tmp_path / "o").rglob("mlperf_log_detail.txt"))


def _eps(n: int):
    from proctor.clients.stream import Endpoint

    return [Endpoint(f"http://127.0.0.1:{9000 + k}/v1/completions") for k in range(n)]


def _refused(tally: Tally, k: int, i: int = 0) -> None:
    """A request sent to endpoint k that could not connect (settled before the fault, as http1 does)."""
    ep = tally.endpoints[k]
    ep.sent += 1
    tally.fail(i, i, "connect", f"cannot connect to {ep.url}: [Errno 111] Connection refused")


def test_connect_faults_are_counted_per_endpoint(caplog):
    """url=A,url=B: B's answers between A's refusals do not hide that A is dead: A is dropped with
    one line after MAX_CONSECUTIVE_CONNECT_FAILURES of its own; the run ends once B is down too."""
    tally = Tally()
    sink = tally.sink = _Sink()  # type: ignore[assignment]
    tally.endpoints = a, b = _eps(2)
    caplog.set_level(logging.WARNING, "proctor.clients.openai")
    n = MAX_CONSECUTIVE_CONNECT_FAILURES
    for i in range(n - 1):
        _refused(tally, 0, i)
        b.sent += 1  # B answers in between (a completion: settled, no fault)
        tally.note_done(i, "usage", False)
    assert not a.down and not tally.dropped
    _refused(tally, 0, n)
    assert a.down and not b.down and not tally.down and not sink.aborts
    (line,) = tally.dropped
    assert f"endpoint {a.url} stopped answering at 20" in line
    assert f"dropped after {n} requests, the run goes on with 1 other" in line
    from proctor.clients.stream import least_busy

    assert least_busy(tally.endpoints) == 1  # A gets nothing more, though it has nothing in flight
    for i in range(n - 1):
        _refused(tally, 1, i)
    b.sent += 2  # two of B's requests settle otherwise (an answer, an HTTP 500): its streak starts again
    for i in range(n - 1):
        _refused(tally, 1, i)
    assert not tally.down
    _refused(tally, 1, 0)
    assert b.down and tally.down and sink.aborts == [tally.down]
    assert f"the endpoint {b.url} stopped answering" in tally.down and "after 1 other(s) were dropped" in tally.down
    assert len([r for r in caplog.records if "stopped answering" in r.getMessage()]) == 2


def test_one_of_two_endpoints_dies_and_is_dropped_the_run_goes_on(tmp_path, http):
    """Two `proctor serve llm` servers; one stops after 1 s of a 3 s Server run: it is dropped with one
    line, every later request goes to the other, the run reaches its scheduled end (not incomplete)."""
    from proctor.clients.openai import from_params

    with running_server(ServerOptions(ttft_ms=1, tpot_ms=1)) as live:
        ctx = running_server(ServerOptions(ttft_ms=1, tpot_ms=1))
        dying = ctx.__enter__()
        stopped = threading.Event()

        def stop() -> None:
            if not stopped.is_set():
                stopped.set()
                ctx.__exit__(None, None, None)

        timer = threading.Timer(1.0, stop)
        try:
            # the dying one first: it wins the ties of "fewest in flight", so it gets most requests
            sut, qsl = from_params(url=[f"http://127.0.0.1:{dying.port}", f"http://127.0.0.1:{live.port}"],
                                   synthetic="64", http=http, **{"in": "const:12", "out": "const:4"})
            timer.start()
            out = run(tmp_path, sut, qsl, Scenario.SERVER, min_duration_ms=3000, min_query_count=120)
        finally:
            timer.cancel()
            stop()
    dead, alive = sut.endpoints
    dead_url = dead.url
    assert not out.incomplete and not sut.down
    (line,) = sut.dropped
    assert f"endpoint {dead_url} stopped answering at 20" in line
    assert line in sut.report()
    assert dead.down and not alive.down
    assert sut.faults["connect"] >= MAX_CONSECUTIVE_CONNECT_FAILURES
    n = out.records.n_samples_issued
    assert n >= 120 and out.sut_failures == sum(sut.faults.values())
    assert read_detail(tmp_path / "mlperf_log_detail.txt").get("result_validity") == "INVALID"  # samples failed
    # after the drop the live endpoint carried the rest: the dead one got nothing more (a request or two
    # may have been on its way to it while the drop was decided)
    assert dead.sent + alive.sent == n
    at_drop = int(re.search(r"dropped after (\d+) requests", line).group(1))  # type: ignore[union-attr]
    assert at_drop <= dead.sent <= at_drop + 2 and alive.sent > n // 4


def test_journey_a_server_killed_mid_run_is_the_verdicts_first_line(tmp_path):
    """Issue 31 §2, as the README has it: `proctor serve llm` in one process, the LLM run in another;
    the server is killed mid-run. The first verdict line is the endpoint's death and when; no rate or
    duration advice follows; report.html is written and shows the same line."""
    import html as html_mod
    import time

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]))
    server = subprocess.Popen([sys.executable, "-m", "proctor", "serve", "llm", "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    run_proc: subprocess.Popen[str] | None = None
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        m = re.search(r"listening on (http://127\.0\.0\.1:\d+)", first)
        assert m, first
        data = tmp_path / "prompts.jsonl"
        data.write_text("".join(orjson.dumps({"prompt": f"tell me a story {k}"}).decode() + "\n" for k in range(50)))
        out = tmp_path / "logs"
        run_proc = subprocess.Popen(
            [sys.executable, "-m", "proctor", "run", "--scenario", "Server", "--model", "llama3_1-8b",
             "--sut", f"openai:url={m.group(1)},model=proctor-tiny", "--dataset", str(data), "--target-qps", "20",
             "--duration-ms", "30000", "-o", str(out)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
        detail = out / "mlperf_log_detail.txt"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and run_proc.poll() is None:
            if detail.is_file() and "Starting performance mode" in detail.read_text(errors="replace"):
                break
            time.sleep(0.05)
        time.sleep(1.5)
        server.kill()
        stdout, stderr = run_proc.communicate(timeout=180)
    finally:
        for p in (server, run_proc):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait(timeout=30)
    assert run_proc.returncode == 1, stdout + stderr
    lines = stdout.splitlines()
    k = next(i for i, line in enumerate(lines) if line.startswith(("INCOMPLETE", "INVALID", "VALID")))
    verdict = lines[k:]
    assert verdict[0].startswith(f"INCOMPLETE: the SUT stopped the run: openai SUT: the endpoint {m.group(1)}")
    assert "stopped answering at 20" in verdict[0] and " s into the run)" in verdict[0]
    assert verdict[0].endswith("find out why it stopped (the server's own log), then run again")
    for advice in ("Increase the target QPS", "--target-qps", "--duration-ms", "--min-queries"):
        assert not any(advice in line for line in verdict), verdict
    page = (out / "report.html").read_text(encoding="utf-8")
    assert 'data-verdict="INCOMPLETE"' in page and html_mod.escape("the SUT stopped the run: openai SUT") in page
    assert "Traceback" not in stderr
