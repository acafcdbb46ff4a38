"""Parameters are validated before anything starts (issue 22, class 8): each bad value is one line
naming the key, exit 2, before the run."""

from __future__ import annotations

import subprocess
import sys

import pytest

from proctor.clients import llm_dataset
from proctor.errors import ConfigError
from proctor.suts.spec import parse_sut_spec


def _run(spec: str, *extra: str, tmp_path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "proctor", "run", "--sut", spec, "--scenario", "Offline", "--quick",
         "-o", str(tmp_path / "out"), *extra],
        capture_output=True, text=True, timeout=120,
    )


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("openai:url=http://127.0.0.1:99999,synthetic=4", ["url=", "1..65535"]),
        ("openai:url=http://127.0.0.1:abc,synthetic=4", ["url=", "port"]),
        ("openai:url=http://hé.example:80,synthetic=4", ["ASCII", "xn--"]),
        ("openai:url=http://127.0.0.1:0,synthetic=4", ["port 0"]),
        ("openai:url=http://127.0.0.1:9,synthetic=4,concurrency=-1", ["concurrency"]),
        ("openai:url=http://127.0.0.1:9,synthetic=4,perf_count=inf", ["perf_count"]),
        ("network:node=http://127.0.0.1:70000", ["node=", "1..65535"]),
        ("network:node=http://127.0.0.1:9,binary=0,compress_out=zlib", ["compress_out", "binary=1"]),
        ("synthetic:total=inf", ["total"]),
    ],
)
def test_a_bad_parameter_is_one_line_and_exit_2(spec, words, tmp_path):
    proc = _run(spec, tmp_path=tmp_path)
    assert proc.returncode == 2, proc.stderr[-500:]
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    err = [ln for ln in proc.stderr.splitlines() if ln.startswith("error")]
    assert len(err) == 1 and all(w in err[0] for w in words), proc.stderr[-500:]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("mlperf_log_detail.txt"))


def test_a_url_holding_dot_py_is_not_a_file():
    parsed = parse_sut_spec("openai:url=http://host.py:8000")
    assert (parsed.kind, parsed.target) == ("name", "openai")
    parsed = parse_sut_spec("my_sut.py:make")
    assert (parsed.kind, parsed.target) == ("file", "my_sut.py:make")


def test_a_dataset_named_py_is_a_dataset(tmp_path):
    data = tmp_path / "prompts.py"
    data.write_text('{"prompt": "hello there"}\n')
    assert [s.prompt for s in llm_dataset.load_jsonl(data)] == ["hello there"]


def test_an_overlong_dataset_line_is_refused_without_reading_it_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(llm_dataset, "MAX_LINE_BYTES", 1000)
    data = tmp_path / "d.jsonl"
    data.write_bytes(b'{"prompt": "ok"}\n' + b'{"prompt": "' + b"x" * 5000 + b'"}\n')
    with pytest.raises(ConfigError) as exc:
        llm_dataset.load_jsonl(data)
    assert exc.value.line == 2 and "longer than" in str(exc.value)
    data.write_bytes(b'{"prompt": "' + b"y" * 986 + b'"}\n')  # exactly the bound with its newline: taken
    assert len(llm_dataset.load_jsonl(data)) == 1


def test_a_tokenizer_file_that_is_not_json_is_one_line(tmp_path):
    pytest.importorskip("tokenizers")
    from proctor.clients.stream import load_tokenizer

    bad = tmp_path / "tokenizer.json"
    bad.write_text("not json")
    with pytest.raises(ConfigError, match="not a tokenizer.json"):
        load_tokenizer(str(tmp_path))
