"""Issue 24 §4: `proctor run --mode AccuracyOnly` on a live LLM endpoint scores itself.

The stub server's TinyLM is deterministic, so the dataset's reference outputs are what it generates:
ROUGE and exact match are 100; the token counts come from the accuracy log. The rules' length bound
is the reference dataset's (llama2-70b: more than 90 % of 294.45 tokens per sample), so this tiny
dataset's 5.8 tokens per sample fails it, and the run says so (exit 1); a benchmark without such a
bound passes.
"""

from __future__ import annotations

import orjson
import pytest

from proctor.checks.accuracy import parse_accuracy_text
from proctor.serving.llm_server import TinyLM


@pytest.fixture
def dataset(tmp_path):
    model = TinyLM()
    lines = []
    for k in range(12):
        prompt = f"sample {k} " + " ".join(model.words[(7 * k + j) % 50] for j in range(k % 9 + 1))
        n = 4 + k % 5
        lines.append(orjson.dumps({"prompt": prompt, "output": model.reference(prompt, n), "max_tokens": n}))
    path = tmp_path / "data.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _run(cli, server, dataset, out, model: str):
    return cli("run", "-s", "Offline", "--model", model, "--mode", "AccuracyOnly", "-q", "--no-trace",
               "--sut", f"openai:url=http://127.0.0.1:{server.port},model=tiny,api=chat", "--dataset", str(dataset),
               "-o", str(out))


def test_an_llm_accuracy_run_writes_accuracy_txt_and_checks_the_length(cli, llm_server, tmp_path, dataset):
    with llm_server(ttft_ms=2, tpot_ms=1, chunk=(1, 3)) as server:
        r = _run(cli, server, dataset, tmp_path / "acc", "llama2-70b")
    assert r.rc == 1, r.out + r.err
    text = (tmp_path / "acc" / "accuracy.txt").read_text()
    got = parse_accuracy_text(text)
    assert got["rouge1"] == got["rouge2"] == got["rougel"] == got["exact_match"] == 100.0
    assert got["gen_num"] == 12 and got["gen_tok_len"] == 69 and got["tokens_per_sample"] == 5.8
    # the dataset's own max_tokens are not the benchmark's: the run says so (issue 24 s.1)
    assert ("generation parameters: 12 dataset sample(s) set their own max_tokens: not the benchmark's "
            "parameters") in r.out
    out = [line for line in r.out.splitlines() if not line.startswith("note:")]
    assert out[1].startswith("accuracy (proctor's scorer): Results {'rouge1': 100.0, 'rouge2': 100.0")
    assert "Llama2-70b 99.9% of FP32: rouge1 100.00 meets >= 44.3868" in out[2]
    assert out[3].startswith("Llama2-70b generation length: tokens_per_sample 5.8 OUTSIDE > 265.005")
    assert out[4] == "INVALID: the generation length is outside the bounds of Llama2-70b"


def test_without_a_length_bound_the_scores_pass(cli, llm_server, tmp_path, dataset):
    with llm_server(ttft_ms=2, tpot_ms=1, chunk=(1, 3)) as server:
        r = _run(cli, server, dataset, tmp_path / "acc", "deepseek-r1")
    assert r.rc == 0, r.out + r.err
    assert "DeepSeek-r1 99% of FP16: exact_match 100.00 meets >= 81.0941" in r.out
    assert "INVALID" not in r.out
