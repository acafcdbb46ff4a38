"""Issue 24 §1: every request carries the benchmark's generation parameters (rules §Additional inference
parameters, per benchmark and mode; the FAQ's decoding), read from what a recording stub server was
sent; a user's override is sent, and marked in the logs and the verdict as not the benchmark's."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.app.session import RunRequest, RunSession, SessionResult
from proctor.clients.generation import plan
from proctor.clients.preflight import PROBE_PROMPT, server_owner
from proctor.errors import ConfigError
from proctor.loadgen.logs.detail import GENERATION_OVERRIDE_KEY
from proctor.loadgen.types import Scenario, TestMode
from proctor.rules.inference import BENCHMARKS, PARAMS_TABLE
from proctor.rules.llm_generation import ACCURACY, GREEDY, PERFORMANCE, SAMPLING_T1, generation_params
from proctor.suts import registry
from proctor.suts.context import RunContext
from tests.support.hostile_http import HostileServer, completion, hostile_server

PERF, ACC = TestMode.PERFORMANCE_ONLY, TestMode.ACCURACY_ONLY


# --- the rules' table as data ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "mode", "max_new", "min_new", "decoding"),
    [
        ("llama2-70b", PERFORMANCE, 1024, None, GREEDY),
        ("llama2-70b-99", ACCURACY, 1024, None, GREEDY),  # a level the rules do not list still names it
        ("llama3.1-8b", PERFORMANCE, 128, 1, GREEDY),
        ("llama3.1-405b", ACCURACY, 20000, 2, GREEDY),
        ("mixtral-8x7b", PERFORMANCE, 1024, 2, GREEDY),
        ("deepseek-r1", PERFORMANCE, 20000, 1, GREEDY),
        ("gpt-oss-120b", PERFORMANCE, 10000, 1, SAMPLING_T1),
        ("gpt-oss-120b", ACCURACY, 32768, 1, SAMPLING_T1),
        ("gpt-oss-120b-interactive", ACCURACY, 32768, 1, SAMPLING_T1),
    ],
)
def test_the_rules_table_per_benchmark_and_mode(name, mode, max_new, min_new, decoding):
    gp = generation_params(name, mode)
    assert gp is not None
    assert (gp.max_new_tokens, gp.min_new_tokens, gp.decoding) == (max_new, min_new, decoding)
    assert PARAMS_TABLE in gp.source and "LLM Benchmarks" in gp.source


def test_sampling_settings_and_non_llm_benchmarks():
    assert (SAMPLING_T1.temperature, SAMPLING_T1.top_p, SAMPLING_T1.top_k) == (1.0, 1.0, -1)
    assert GREEDY.temperature == 0.0 and GREEDY.top_p is None
    assert generation_params("resnet50") is None and generation_params("no-such-model") is None
    with pytest.raises(ValueError, match="mode"):
        generation_params("llama2-70b", "offline")
    # every benchmark with a table row in rules.inference has a decoding named by the FAQ
    for b in BENCHMARKS:
        if any(k.startswith("max_new_tokens") for k in b.parameters):
            gp = generation_params(b.name)
            assert gp is not None and gp.decoding is not None, b.name


def test_plan_marks_every_departure():
    ctx = RunContext("llama3.1-405b", "PerformanceOnly")
    kw = {"min_tokens": "auto", "ignore_eos": False, "sample_max_tokens": [], "accepts_min_tokens": lambda: True}
    g = plan(ctx, max_tokens=None, **kw)
    assert (g.max_tokens, g.min_tokens, g.override) == (20000, 2, "")
    assert plan(ctx, max_tokens=20000, **kw).override == ""  # the benchmark's value, typed: not an override
    g = plan(ctx, max_tokens=64, **kw)
    assert g.max_tokens == 64 and "max_tokens=64 (the benchmark's max_new_tokens: 20000)" in g.override
    g = plan(ctx, max_tokens=None, **{**kw, "sample_max_tokens": [None, 7, 20000, 9]})
    assert g.override == "2 dataset sample(s) set their own max_tokens"
    g = plan(ctx, max_tokens=None, **{**kw, "ignore_eos": True})
    assert g.min_tokens == 20000 and "ignore_eos=1" in g.override
    g = plan(ctx, max_tokens=None, **{**kw, "min_tokens": "off"})
    assert g.min_tokens == 0 and "min_tokens not sent (the benchmark's min_new_tokens: 2" in g.override
    # a 1-token minimum only excludes an empty output (reported as such): not sending it is not marked
    g = plan(RunContext("llama3.1-8b"), max_tokens=None, **{**kw, "min_tokens": "off"})
    assert (g.max_tokens, g.min_tokens, g.override) == (128, 0, "")
    g = plan(RunContext("gpt-oss-120b", "SubmissionRun"), max_tokens=None, **kw)
    assert g.max_tokens == 32768 and "performance mode: 10000" in g.override
    g = plan(RunContext("resnet50"), max_tokens=None, **kw)
    assert (g.max_tokens, g.override) == (128, "") and "no rule for resnet50" in g.line
    assert plan(None, max_tokens=50, **kw).max_tokens == 50


# --- the context seam -----------------------------------------------------------------------------------


def test_a_factory_that_takes_context_gets_the_runs(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(
        "seen = []\n"
        "class S:\n    def issue_query(self, q): pass\n    def flush_queries(self): pass\n"
        "def with_ctx(n='1', context=None):\n    seen.append(context)\n    return S(), int(n)\n"
        "def without(n='1'):\n    return S(), int(n)\n",
        encoding="utf-8",
    )
    ctx = RunContext("llama2-70b", "AccuracyOnly")
    _, n = registry.build(f"{path}:with_ctx:n=3", ctx)
    assert n == 3
    module = sys.modules[[k for k in sys.modules if k.startswith("proctor_user_sut_")][-1]]
    assert module.seen == [ctx]
    assert registry.build(f"{path}:without:n=2", ctx)[1] == 2  # called as before
    with pytest.raises(ConfigError, match="context"):  # the run's, never a k=v key
        registry.build(f"{path}:with_ctx:context=x", ctx)
    assert [p.name for p in registry.params_of(module.with_ctx)] == ["n"]


# --- the requests a recording stub server saw -------------------------------------------------------------


@contextmanager
def stub(owner: str | None) -> Iterator[HostileServer]:
    """A server that records every request; its model list names `owner` (vllm, sglang) or nobody."""

    def respond(request: bytes) -> bytes:
        if request.startswith(b"GET"):
            model = {"id": "m", "object": "model", **({"owned_by": owner} if owner else {})}
            body = orjson.dumps({"object": "list", "data": [model]})
            return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
                len(body), body)
        return completion("hi", usage={"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5})

    with hostile_server(respond) as server:
        yield server


def sent(server: HostileServer) -> list[dict]:
    """The run's request bodies (the preflight's probe of what the server offers left out)."""
    bodies = [orjson.loads(r.split(b"\r\n\r\n", 1)[1]) for r in server.requests if r.startswith(b"POST")]
    return [b for b in bodies if b.get("prompt") != PROBE_PROMPT]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "prompts.jsonl"
    path.write_bytes(b"".join(orjson.dumps({"prompt": f"ba de {i}"}) + b"\n" for i in range(4)))
    return path


def run(tmp_path: Path, port: int, dataset: Path, model: str, mode: TestMode, extra: str = "") -> SessionResult:
    out = tmp_path / f"logs-{model}-{mode}{extra.replace(',', '-').replace('=', '')}"
    request = RunRequest(
        scenario=Scenario.OFFLINE, sut=f"openai:url=http://127.0.0.1:{port},model=m{extra}", mode=mode,
        model=model, output_dir=out, dataset=dataset, duration_ms=20, min_queries=4, trace=False,
        report=False, audit_conf=tmp_path / "no-audit.config",
    )
    return RunSession(request).execute()


def detail_values(result: SessionResult, key: str) -> list[object]:
    text = result.outcome.log_paths["detail"].read_text(encoding="utf-8")
    return [orjson.loads(line.split(":::MLLOG ", 1)[1])["value"] for line in text.splitlines()
            if f'"key": "{key}"' in line]


@pytest.mark.parametrize(
    ("model", "mode", "owner", "want"),
    [
        ("llama2-70b", PERF, "vllm", {"max_tokens": 1024, "temperature": 0.0}),
        ("llama2-70b", ACC, None, {"max_tokens": 1024, "temperature": 0.0}),
        ("llama3_1-8b", PERF, "vllm", {"max_tokens": 128, "min_tokens": 1, "temperature": 0.0}),
        ("llama3_1-8b", PERF, None, {"max_tokens": 128, "temperature": 0.0}),  # auto: not known to take it
        ("gpt-oss-120b", PERF, "sglang", {"max_tokens": 10000, "min_tokens": 1, "temperature": 1.0, "top_p": 1.0}),
        ("gpt-oss-120b", ACC, "sglang", {"max_tokens": 32768, "min_tokens": 1, "temperature": 1.0, "top_p": 1.0}),
        ("resnet50", PERF, "vllm", {"max_tokens": 128, "temperature": 0.0}),  # no rule: proctor's default
    ],
)
def test_each_request_carries_the_benchmarks_parameters(tmp_path, dataset, model, mode, owner, want):
    with stub(owner) as server:
        result = run(tmp_path, server.port, dataset, model, mode)
    bodies = sent(server)
    assert len(bodies) >= 4
    for body in bodies:
        got = {k: body[k] for k in ("max_tokens", "min_tokens", "temperature", "top_p") if k in body}
        assert got == want
    assert not any(k in body for body in bodies for k in ("ignore_eos", "top_k"))
    assert detail_values(result, GENERATION_OVERRIDE_KEY) == []
    assert "not the benchmark's parameters" not in "\n".join(result.lines)
    line = next(x for x in result.outcome.sut_report if "generation:" in x)
    assert f"max_tokens={want['max_tokens']}" in line


def test_an_override_is_sent_and_marked_in_the_logs_and_the_verdict(tmp_path, dataset):
    with stub("vllm") as server:
        result = run(tmp_path, server.port, dataset, "llama2-70b", PERF, ",max_tokens=64")
    assert {b["max_tokens"] for b in sent(server)} == {64}
    why = "max_tokens=64 (the benchmark's max_new_tokens: 1024)"
    assert detail_values(result, GENERATION_OVERRIDE_KEY) == [why]
    verdict = "\n".join(result.lines)
    assert f"generation parameters: {why}: not the benchmark's parameters" in verdict
    short = detail_values(result, "proctor_short_run")
    assert len(short) == 1 and "not the benchmark's parameters" in str(short[0])
    summary = result.outcome.log_paths["summary"].read_text(encoding="utf-8")
    assert "not the benchmark's parameters" in summary


@pytest.mark.parametrize(("flag", "owner", "min_sent"), [("on", None, True), ("off", "vllm", False)])
def test_min_tokens_on_and_off(tmp_path, dataset, flag, owner, min_sent):
    with stub(owner) as server:
        run(tmp_path, server.port, dataset, "llama3_1-8b", PERF, f",min_tokens={flag}")
    assert {("min_tokens" in b) for b in sent(server)} == {min_sent}


def test_a_larger_minimum_not_sent_is_marked(tmp_path, dataset):
    with stub(None) as server:  # mixtral asks min_new_tokens 2; this server is not known to take min_tokens
        result = run(tmp_path, server.port, dataset, "mixtral-8x7b", PERF)
    assert {b["max_tokens"] for b in sent(server)} == {1024}
    assert "min_tokens not sent (the benchmark's min_new_tokens: 2" in str(
        detail_values(result, GENERATION_OVERRIDE_KEY))


def test_server_owner_reads_the_model_list_bounded():
    with stub("vllm") as server:
        assert server_owner(f"http://127.0.0.1:{server.port}", "completions", 5) == "vllm"
    with stub(None) as server:
        assert server_owner(f"http://127.0.0.1:{server.port}/v1", "chat", 5) == ""

    def junk(request: bytes) -> bytes:
        return b"NOT HTTP " + b"x" * 100_000

    with hostile_server(junk) as server:
        assert server_owner(f"http://127.0.0.1:{server.port}", "completions", 5) == ""


def test_the_journey_an_accuracy_run_with_an_override(tmp_path, dataset):
    """`proctor run --mode AccuracyOnly --model gpt-oss-120b` with max_tokens= on the SUT spec: the
    requests carry it, the run finishes (exit 0) and says the parameters are not the benchmark's."""
    with stub("sglang") as server:
        r = subprocess.run(
            [sys.executable, "-m", "proctor", "run", "--scenario", "Offline", "--model", "gpt-oss-120b",
             "--mode", "AccuracyOnly", "--sut", f"openai:url=http://127.0.0.1:{server.port},model=m,max_tokens=100",
             "--dataset", str(dataset), "-o", str(tmp_path / "acc"), "--no-report"],
            capture_output=True, text=True, timeout=120, cwd=tmp_path,
        )
    assert r.returncode == 0, r.stdout + r.stderr
    assert {(b["max_tokens"], b["min_tokens"], b["temperature"]) for b in sent(server)} == {(100, 1, 1.0)}
    assert "max_tokens=100 (the benchmark's max_new_tokens: 32768): not the benchmark's parameters" in r.stdout
    detail = (tmp_path / "acc" / "mlperf_log_detail.txt").read_text(encoding="utf-8")
    assert f'"key": "{GENERATION_OVERRIDE_KEY}"' in detail


@settings(max_examples=60, deadline=None)
@given(answer=st.binary(max_size=4096), owner=st.text(max_size=60))
def test_server_owner_takes_any_answer(answer, owner):
    """The model list is the server's (hostile input): any bytes give a short lower-case name or ""."""
    body = orjson.dumps({"data": [{"id": "m", "owned_by": owner}]})
    replies = [answer, b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)]
    for reply in replies:
        with hostile_server(lambda request, r=reply: r) as server:
            got = server_owner(f"http://127.0.0.1:{server.port}", "completions", 2)
        assert got == "" or (len(got) <= 40 and got == got.lower() and got.isascii())
    expected = owner.lower() if re.fullmatch(r"[A-Za-z0-9_.-]{1,40}", owner) else ""
    assert got == expected


def test_a_sweep_point_sends_the_benchmarks_parameters_and_marks_an_override(tmp_path, dataset):
    """`proctor sweep` builds each point's SUT as `proctor run` does: told the benchmark, its requests
    carry the benchmark's max_tokens; a user's override is marked in that point's logs."""
    from proctor.app.sweep import point_runner

    with stub("vllm") as server:
        for extra, want in (("", 1024), (",max_tokens=7", 7)):
            request = RunRequest(
                scenario=Scenario.SERVER, sut=f"openai:url=http://127.0.0.1:{server.port},model=m{extra}",
                model="llama2-70b", output_dir=tmp_path, dataset=dataset, duration_ms=50, min_queries=4,
                trace=False, report=False, audit_conf=tmp_path / "no-audit.config",
            )
            before = len(sent(server))
            point = point_runner(request)("rate", 50.0, tmp_path / f"point{want}")
            bodies = sent(server)[before:]
            assert bodies and {b["max_tokens"] for b in bodies} == {want}
            detail = (tmp_path / f"point{want}" / "mlperf_log_detail.txt").read_text(encoding="utf-8")
            assert (GENERATION_OVERRIDE_KEY in detail) == (want == 7), point
