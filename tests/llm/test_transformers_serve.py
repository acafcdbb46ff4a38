"""The openai SUT against a real third-party server: `transformers serve` with a tiny local model.

Needs an interpreter with `transformers[serving]` and CPU `torch`: PROCTOR_TRANSFORMERS_PYTHON
names one (a venv's python, or a wrapper script that sets its PYTHONPATH), else this interpreter
is used when it has them; otherwise the tests skip. The model (random weights, a byte-level BPE
tokenizer trained here) is written by tests.support.hf_tiny into a temp folder, nothing is
downloaded, and the server binds 127.0.0.1 with HF_HUB_OFFLINE=1.

What transformers serve does (5.x): usage on the final chunk, no `data: [DONE]`, a role-only first
chat chunk. Token counts must come out exact from the usage record; TTFT and TPOT are measured.
"""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

from proctor.loadgen.records import NOT_SET
from proctor.loadgen.types import Scenario
from tests.support import hf_tiny

pytestmark = pytest.mark.slow
ENV = "PROCTOR_TRANSFORMERS_PYTHON"
TOKENS = 16
START_S = 120  # a bound on model load: the tiny model loads in seconds
SERVE = "import sys; from transformers.cli.transformers import main; sys.argv[0] = 'transformers'; sys.exit(main())"


@pytest.fixture(scope="module")
def tserve(tmp_path_factory, third_party):
    """(base URL, model folder) of a running `transformers serve` on loopback."""
    serving_python, free_port, server_process = third_party
    py = serving_python(ENV, ("transformers", "torch", "fastapi", "uvicorn"), "transformers serve")
    root = tmp_path_factory.mktemp("tserve")
    model = root / "tiny-llama"
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_HOME=str(root / "hf-home"))
    made = subprocess.run([py, hf_tiny.__file__, str(model)], env=env, capture_output=True, text=True,
                          timeout=START_S)
    assert made.returncode == 0, made.stderr[-2000:]
    port = free_port()
    cmd = [py, "-c", SERVE, "serve", str(model), "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"]
    with server_process("transformers serve", cmd, "/health", port, root / "serve.log", START_S, env) as url:
        yield url, model


@pytest.mark.parametrize(("api", "scenario"), [("completions", Scenario.SINGLE_STREAM), ("chat", Scenario.SERVER)])
def test_transformers_serve_exact_counts_and_latencies(tmp_path, tserve, drive_openai, api, scenario):
    url, model = tserve
    out, sut = drive_openai(tmp_path, url, str(model), api, scenario, hf_tiny.WORDS, TOKENS, 2)
    res, rec = out.result, out.records
    n = rec.n_samples_issued
    assert not sut.faults, sut.report()
    assert out.errors == 0 and not out.incomplete and n >= 12
    # the usage record on the final chunk (no [DONE]) gives every count; eos is off, so all are 16
    assert sut.count_sources == {"usage": n}
    assert np.all(rec.sample_n_tokens[:n] == TOKENS)
    assert res.token_count == TOKENS * n
    # measured from the streamed chunks: every sample has a first token before its last one
    first, done = rec.sample_first_token_ns[:n], rec.sample_done_ns[:n]
    assert np.all(first != NOT_SET) and np.all(first < done)
    assert res.ttft.count == n and 0 < res.ttft.min <= res.ttft.max
    assert res.tpot.count == n and res.tpot.percentiles[0.5] > 0
