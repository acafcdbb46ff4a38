"""Issue 24 section 4: TEST06 on a live LLM endpoint. `proctor audit TEST06 --sut openai:url=...`
runs the audit against the endpoint with the responses logged as int32 token ids (`output=ids`,
set by the audit), and verifies first-token consistency, the EOS rule and the token counts on what
the endpoint sent. A dead endpoint fails it: tests/llm/test_endpoint_down.py (exit 2 by the
preflight) and tests/audits/test_audit_cli.py (exit 1 without it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import orjson
import pytest

from proctor.audits.verify import read_accuracy_log
from proctor.serving.llm_server import ServerOptions
from tests.llm.conftest import running_server
from tests.support.hostile_http import hostile_server, sse

ROOT = Path(__file__).resolve().parents[2]
MODEL_DIR = "results/proctor/llama2-70b/Server/TEST06"


def _dataset(tmp_path: Path, n: int = 8, max_tokens: int = 6) -> Path:
    data = tmp_path / "prompts.jsonl"
    data.write_bytes(b"".join(orjson.dumps({"prompt": f"ba de ko {i}", "max_tokens": max_tokens}) + b"\n"
                              for i in range(n)))
    return data


def _audit(tmp_path: Path, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]))
    return subprocess.run(
        [sys.executable, "-m", "proctor", "audit", "TEST06", "--scenario", "Server", "--model", "llama2-70b",
         "--sut", f"openai:url={url},model=proctor-tiny{''.join(',' + e for e in extra)}",
         "--dataset", str(_dataset(tmp_path)), "--target-qps", "200", "--no-trace", "-o", str(tmp_path / "o")],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
    )


def test_test06_on_proctor_serve_llm_passes_on_token_ids(tmp_path):
    with running_server(ServerOptions(ttft_ms=1, tpot_ms=0.5)) as server:
        r = _audit(tmp_path, f"http://127.0.0.1:{server.port}")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "TEST06: PASS" in r.stdout
    text = (tmp_path / "o" / MODEL_DIR / "verify_accuracy.txt").read_text()
    assert text.splitlines() == ["First token check pass: True", "EOS check pass: True",
                                 "Sample length check pass: True", "TEST06 verification complete"]
    entries = read_accuracy_log(tmp_path / "o" / MODEL_DIR / "accuracy/mlperf_log_accuracy.json")
    assert len(entries) >= 100  # TEST06's audit.config: min_query_count 100, every response logged
    for e in entries:  # the live endpoint's token ids, int32: 6 of them, the first one reported first
        ids = np.frombuffer(bytes.fromhex(e.data), "<i4")
        assert e.token_count == ids.size == 6
        assert np.frombuffer(bytes.fromhex(e.token_data), "<i4").tolist() == ids[:1].tolist()
    assert "the openai SUT logs them (output=ids)" in r.stdout


def _models_or(stream: bytes):
    def respond(req: bytes) -> bytes:
        if req.startswith(b"GET /v1/models"):
            body = orjson.dumps({"object": "list", "data": [{"id": "proctor-tiny", "object": "model"}]})
            return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body
        return stream

    return respond


def test_an_endpoint_that_ends_outputs_with_two_eos_tokens_fails_test06(tmp_path):
    """The counterpart: an endpoint whose every output ends with EOS twice (token 2, 2) fails the
    EOS rule, exit 1, the official line and the sample named."""
    stream = sse({"choices": [{"index": 0, "text": "a", "token_ids": [7]}]},
                 {"choices": [{"index": 0, "text": "", "token_ids": [2, 2], "finish_reason": "stop"}]},
                 {"choices": [], "usage": {"completion_tokens": 3}})
    with hostile_server(_models_or(stream)) as srv:
        r = _audit(tmp_path, f"http://127.0.0.1:{srv.port}")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "TEST06: FAIL" in r.stdout
    text = (tmp_path / "o" / MODEL_DIR / "verify_accuracy.txt").read_text()
    assert "EOS check pass: False" in text and "First token check pass: True" in text
    assert "output ends with 2 EOS tokens (2)" in text


@pytest.mark.parametrize(
    ("given", "token_ids", "logged"),
    [("", True, "ids"), (",output=text", True, "text"), (",output=ids", False, "ids"), ("", False, "text")],
)
def test_a_run_that_reads_token_ids_asks_the_sut_unless_its_spec_names_its_output(given, token_ids, logged):
    """TEST06 tells the SUT through its RunContext (no SUT name in the audit); an output= in the
    spec wins."""
    from proctor.suts import registry
    from proctor.suts.context import RunContext

    context = RunContext("llama2-70b", "AccuracyOnly", token_ids=token_ids)
    sut, _ = registry.build(f"openai:url=http://127.0.0.1:9,synthetic=2,preflight=0{given}", context)
    try:
        assert sut.config.output == logged
    finally:
        sut.close()


@pytest.mark.parametrize(
    "chunks",
    [
        [{"choices": [{"index": 0, "text": "a", "finish_reason": "stop"}]}],  # no ids: not re-tokenized
        [{"choices": [{"index": 0, "text": "a", "token_ids": [2**40], "finish_reason": "stop"}]}],  # not int32
    ],
)
def test_responses_without_int32_token_ids_fail_their_samples(tmp_path, chunks):
    stream = sse(*chunks, {"choices": [], "usage": {"completion_tokens": 1}})
    with hostile_server(_models_or(stream)) as srv:
        r = _audit(tmp_path, f"http://127.0.0.1:{srv.port}")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "TEST06: FAIL" in r.stdout and "FAIL: audit run: " in r.stdout
    assert "sent no int32 token ids with every chunk; output=ids needs them" in r.stdout + r.stderr
