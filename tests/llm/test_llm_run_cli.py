"""`proctor run --sut openai:... --dataset FILE --model llama2-70b` end to end against `proctor serve llm`.

The verdicts asserted do not depend on load: a 24-query Server run cannot pass early stopping at
the TTFT p99 (too few queries for any outcome), and an Offline run whose server takes longer than
the minimum duration is valid.
"""

from __future__ import annotations

import re

import orjson
import pytest


@pytest.fixture
def dataset(tmp_path):
    path = tmp_path / "prompts.jsonl"
    path.write_bytes(b"".join(orjson.dumps({"prompt": f"ba de ko {i}", "max_tokens": 6}) + b"\n"
                              for i in range(24)))
    return path


def run_args(tmp_path, port: int, dataset, scenario: str, *extra: str) -> list[str]:
    return ["run", "--scenario", scenario, "--model", "llama2-70b",
            "--sut", f"openai:url=http://127.0.0.1:{port},model=tiny", "--dataset", str(dataset),
            "--duration-ms", "300", "--min-queries", "24", "--target-qps", "40",
            "--output", str(tmp_path / f"logs-{scenario}"), *extra]


def test_server_run_reports_ttft_tpot_and_the_sut(cli, llm_server, tmp_path, dataset):
    # llama2-70b's Server entry in mlperf.conf has target_latency = 0: only the TTFT/TPOT bounds count
    with llm_server(ttft_ms=2, tpot_ms=1, chunk=(1, 3)) as server:
        r = cli(*run_args(tmp_path, server.port, dataset, "Server"))
    assert r.rc == 1, r.out + r.err
    assert "INVALID" in r.out and "early stopping" in r.out and "TTFT" in r.out
    assert re.search(r"TTFT p99 / TPOT p99\s*│\s*[\d.]+ ms / [\d.]+ ms", r.out), r.out
    n = int(re.search(r"queries / samples\s*│\s*(\d+) / \d+", r.out).group(1))
    assert n >= 24
    assert f"sut: token counts from: usage {n}" in r.out and "sut: faults: none" in r.out
    assert "Traceback" not in r.err


def test_offline_run_is_valid(cli, llm_server, tmp_path, dataset):
    # the one Offline query lasts at least 250 + 5 x 20 ms > the 300 ms minimum, whatever the load
    with llm_server(ttft_ms=250, tpot_ms=20, chunk=(2, 2)) as server:
        r = cli(*run_args(tmp_path, server.port, dataset, "Offline"))
    assert r.rc == 0, r.out + r.err
    assert "VALID" in r.out and "INVALID" not in r.out
    assert "sut: token counts from: usage" in r.out and "sut: faults: none" in r.out


def test_a_dead_endpoint_is_refused_before_the_run(cli, tmp_path, dataset, unused_port):
    # issue 23: the preflight refuses it in one line (exit 2) and no log is written
    r = cli(*run_args(tmp_path, unused_port, dataset, "Offline"))
    assert r.rc == 2, r.out + r.err
    assert "key 'url'" in r.err and "connection refused" in r.err and len(r.err.strip().splitlines()) == 1
    assert not (tmp_path / "logs-Offline" / "mlperf_log_detail.txt").exists()
    assert "Traceback" not in r.err


def test_a_dead_endpoint_without_preflight_fails_every_sample_in_few_lines(cli, tmp_path, dataset, unused_port):
    args = run_args(tmp_path, unused_port, dataset, "Offline")
    args[args.index("--sut") + 1] += ",preflight=0"
    r = cli(*args)
    assert r.rc == 1, r.out + r.err
    assert "INVALID" in r.out and re.search(r"sut: faults: connect \d+", r.out), r.out
    assert r.err.count("failed: connect") <= 1 and "Traceback" not in r.err


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--dataset", "missing.jsonl"], "--dataset"),
        (["--sut", "openai:model=x"], "url"),
        (["--sut", "openai:url=ftp://x,model=x"], "url"),
        (["--sut", "openai:url=http://127.0.0.1:9,bogus=1"], "bogus"),
    ],
)
def test_bad_sut_options_exit_2(cli, tmp_path, dataset, args, words):
    base = ["run", "--scenario", "Offline", "--model", "llama2-70b", "--duration-ms", "100",
            "--output", str(tmp_path / "logs")]
    if args[0] != "--dataset":
        base += ["--dataset", str(dataset)]
    r = cli(*base, *args)
    assert r.rc == 2 and words in r.err and "Traceback" not in r.err, r.out + r.err


@pytest.fixture
def unused_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_list_suts_shows_openai_and_network_parameters(cli):
    r = cli("run", "--list-suts")
    assert r.rc == 0
    openai = r.out[r.out.index("openai  ("):]
    for line in ("api=completions", "concurrency=0", "stall_s=60.0", "tokenizer=none", "max_tokens=benchmark's", "min_tokens=auto"):
        assert line in openai, openai
    network = r.out[r.out.index("network  ("):r.out.index("openai  (")]
    for line in ("qsl=digits", "binary=1", "chunk=64", "timeout_s=30.0"):
        assert line in network, network


def test_readme_and_list_suts_say_the_same_default_warm_up(cli):
    """A closed loop at --concurrency 1 sends no warm-up request (warm_up(1) sends none): --list-suts
    and the README both say so, and both name the 2-or-more-in-flight runs that send one per stream."""
    from pathlib import Path

    r = cli("run", "--list-suts")
    openai = " ".join(r.out[r.out.index("openai  ("):].split())
    warmup = openai[openai.index("warmup=auto"):openai.index("warmup_s=")]
    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8").split())
    for text in (warmup, readme):
        plain = text.replace("`", "")
        assert "one per stream" in plain or "one warm-up request each" in plain
        assert "(proctor sweep --concurrency N >= 2, MultiStream)" in plain, plain[:400]
        assert "(--concurrency 1, SingleStream)" in plain and "sends none" in plain.replace("none with", "sends none")
