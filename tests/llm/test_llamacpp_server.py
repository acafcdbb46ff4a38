"""The openai SUT against llama.cpp's server (`llama-cpp-python[server]`) with a tiny local GGUF.

Needs an interpreter with `llama_cpp` (built from source; ~9 minutes on 2 cores) and `gguf`:
PROCTOR_LLAMACPP_PYTHON names one, else this interpreter is used when it has them; otherwise the
tests skip. The model (random weights, a SentencePiece-style vocabulary) is written by
tests.support.gguf_tiny into a temp folder, nothing is downloaded, and the server binds 127.0.0.1.

What llama-cpp-python's server does (0.3.x): one chunk per token, an empty-text chunk for a token
that ends inside a UTF-8 character, a final chunk with finish_reason and then `data: [DONE]`, and no
usage record even when `stream_options.include_usage` is asked. So its token counts are exact only
from per-token logprobs (`logprobs=1`, served with `--logits_all true`; chat sends them only when
`top_logprobs` is given too, which proctor's request does); the preflight finds that and asks for
them (logprobs left unset); with `logprobs=0` proctor has no exact source and says so instead of
guessing from the chunks.
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from proctor.loadgen.records import NOT_SET
from proctor.loadgen.types import Scenario
from tests.support import gguf_tiny

pytestmark = pytest.mark.slow
ENV = "PROCTOR_LLAMACPP_PYTHON"
TOKENS = 16
START_S = 120


@pytest.fixture(scope="module")
def llamacpp(tmp_path_factory, third_party):
    """Base URL of a running llama.cpp server on loopback."""
    serving_python, free_port, server_process = third_party
    py = serving_python(ENV, ("llama_cpp", "gguf", "uvicorn", "sse_starlette"), "llama.cpp server")
    root = tmp_path_factory.mktemp("llamacpp")
    model = root / "tiny.gguf"
    made = subprocess.run([py, gguf_tiny.__file__, str(model)], capture_output=True, text=True, timeout=START_S)
    assert made.returncode == 0, made.stderr[-2000:]
    port = free_port()
    cmd = [py, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1", "--port", str(port),
           "--n_ctx", "2048", "--logits_all", "true"]
    with server_process("llama.cpp server", cmd, "/v1/models", port, root / "serve.log", START_S) as url:
        yield url


@pytest.mark.parametrize(("api", "scenario"), [("completions", Scenario.SINGLE_STREAM), ("chat", Scenario.SERVER)])
def test_llamacpp_exact_counts_from_logprobs(tmp_path, llamacpp, drive_openai, api, scenario, http):
    out, sut = drive_openai(tmp_path, llamacpp, "tiny", api, scenario, gguf_tiny.WORDS, TOKENS, 1,
                            logprobs="1", http=http)
    res, rec = out.result, out.records
    n = rec.n_samples_issued
    assert not sut.faults, sut.report()
    assert out.errors == 0 and not out.incomplete and n >= 12
    # no usage record comes: every count is from the per-token logprobs, and the model never ends early
    assert sut.count_sources == {"logprobs": n}
    assert np.all(rec.sample_n_tokens[:n] == TOKENS)
    assert res.token_count == TOKENS * n
    first, done = rec.sample_first_token_ns[:n], rec.sample_done_ns[:n]
    assert np.all(first != NOT_SET) and np.all(first < done)
    assert res.ttft.count == n and res.tpot.count == n and res.tpot.percentiles[0.5] > 0


def test_llamacpp_gets_logprobs_asked_by_the_preflight(tmp_path, llamacpp, drive_openai):
    """logprobs left unset: the preflight finds no usage record but logprobs, and asks for them in
    every request (issue 34 §7); it says TEST06 cannot pass (no token ids)."""
    out, sut = drive_openai(tmp_path, llamacpp, "tiny", "completions", Scenario.SINGLE_STREAM, gguf_tiny.WORDS,
                            TOKENS, 1, n=4)
    n = out.records.n_samples_issued
    assert sut.config.logprobs and not sut.faults
    assert sut.count_sources == {"logprobs": n} and np.all(out.records.sample_n_tokens[:n] == TOKENS)
    report = sut.report()
    assert any("token ids no, logprobs yes, usage no" in line for line in report), report
    assert any(line.startswith("preflight: TEST06 cannot pass") for line in report)


def test_llamacpp_without_an_exact_source_fails_the_samples(tmp_path, llamacpp, drive_openai):
    """No usage, no ids, no tokenizer, logprobs=0: proctor refuses to guess a count from the chunks,
    and said so before the run."""
    out, sut = drive_openai(tmp_path, llamacpp, "tiny", "completions", Scenario.SINGLE_STREAM, gguf_tiny.WORDS,
                            TOKENS, 1, n=4, logprobs="0")
    assert any(line.startswith("preflight: no exact token count") for line in sut.report())
    rec = out.records
    n = rec.n_samples_issued
    assert n >= 1
    assert out.result is None or not out.valid
    assert dict(sut.faults) == {"no_count": n}
    assert rec.sample_failed is not None and int(rec.sample_failed[:n].sum()) == rec.failed_samples == n
