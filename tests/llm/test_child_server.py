"""tests.support.child_server (a third-party server as a bounded child process) and the bench's
`--serve llamacpp` built on it, with a stand-in interpreter: no llama.cpp, no model.

The stand-in (`fake_python`) is what `--serve-python` names: run with a script and a path it writes
the "model" file; run with `-m MODULE ...` it records its argv and answers GET /v1/models on the
--port it was given, as llama.cpp's server does once the model is loaded.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest
from bench import llm_client

from proctor.clients.llm_formats import load_dataset
from proctor.clients.openai_config import OpenAIConfig
from tests.support.child_server import ServerStartError, answers, child_server, free_port

FAKE = textwrap.dedent('''\
    import json, os, sys
    from http.server import BaseHTTPRequestHandler, HTTPServer
    if sys.argv[1] != "-m":  # the tiny-model writer: SCRIPT OUT
        open(sys.argv[2], "wb").write(b"GGUF")
        sys.exit(0)
    open(os.environ["FAKE_ARGV"], "w").write(json.dumps(sys.argv[1:]))
    if os.environ.get("FAKE_EXIT"):
        print("cannot load the model", flush=True)
        sys.exit(int(os.environ["FAKE_EXIT"]))
    class Models(BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"object": "list", "data": [{"id": "tiny", "object": "model"}]}).encode()
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def log_message(self, *a):
            pass
    HTTPServer(("127.0.0.1", int(sys.argv[sys.argv.index("--port") + 1])), Models).serve_forever()
    ''')


@pytest.fixture
def fake_python(tmp_path, monkeypatch):
    """(the stand-in interpreter's path, the file its server run records argv in)."""
    script = tmp_path / "fake_python"
    script.write_text(f"#!{sys.executable}\n" + FAKE)
    script.chmod(0o755)
    argv = tmp_path / "argv.json"
    monkeypatch.setenv("FAKE_ARGV", str(argv))
    return str(script), argv


def sleeper(tmp_path: Path, seconds: int = 60) -> tuple[list[str], Path]:
    """A child that never answers HTTP and writes its pid first."""
    pid = tmp_path / "pid"
    return [sys.executable, "-c", f"import os, time; open({str(pid)!r}, 'w').write(str(os.getpid())); "
            f"time.sleep({seconds})"], pid


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_child_server_yields_once_it_answers_and_stops_it(tmp_path):
    port = free_port()
    cmd = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)]
    url = f"http://127.0.0.1:{port}/"
    with child_server("http.server", cmd, url, tmp_path / "log", 30, poll_s=0.05) as proc:
        assert answers(url)
        assert proc.poll() is None
    assert proc.returncode is not None  # stopped (and reaped) on the way out
    assert not answers(url, 0.5)


def test_child_server_stops_the_server_when_the_body_raises(tmp_path):
    port = free_port()
    cmd = [sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)]
    with pytest.raises(KeyError), child_server("http.server", cmd, f"http://127.0.0.1:{port}/", tmp_path / "log",
                                                30, poll_s=0.05) as proc:
        raise KeyError("the test failed")
    assert proc.returncode is not None


def test_child_server_that_exits_raises_with_its_log(tmp_path):
    cmd = [sys.executable, "-c", "print('no such model: tiny.gguf'); raise SystemExit(3)"]
    with pytest.raises(ServerStartError) as e, child_server("llama.cpp server", cmd, f"http://127.0.0.1:{free_port()}/",
                                                            tmp_path / "log", 30, poll_s=0.05):
        pass
    assert "llama.cpp server exited 3" in str(e.value) and "no such model: tiny.gguf" in str(e.value)


def test_child_server_that_never_answers_raises_and_is_stopped(tmp_path):
    cmd, pid_file = sleeper(tmp_path)
    ready = f"http://127.0.0.1:{free_port()}/health"
    with pytest.raises(ServerStartError) as e, child_server("slow", cmd, ready, tmp_path / "log", 1.0, poll_s=0.05):
        pass
    assert f"slow did not answer {ready} in 1 s" in str(e.value)
    assert gone(int(pid_file.read_text()))  # not left running (nor a zombie: it was waited for)


def test_bench_serve_llamacpp_asks_for_exact_counts(tmp_path, fake_python):
    """The server gets --logits_all true and proctor's requests logprobs=1: llama.cpp sends no usage
    record, so without both every sample fails no_count (tests/llm/test_llamacpp_server.py, real server)."""
    python, argv_file = fake_python
    with llm_client.llamacpp_serve(python, tmp_path) as (url, model, needs):
        assert needs == {"logprobs": "1"}
        assert model == llm_client.served_model(url) == "tiny"
        argv = json.loads(argv_file.read_text())
    assert argv[:2] == ["-m", "llama_cpp.server"]
    opts = dict(zip(argv[2::2], argv[3::2], strict=True))
    assert opts["--logits_all"] == "true" and opts["--host"] == "127.0.0.1" and opts["--model_alias"] == "tiny"
    assert opts["--interrupt_requests"] == "false"  # a new request must not cut the stream in progress
    assert Path(opts["--model"]) == tmp_path / "tiny.gguf" and (tmp_path / "tiny.gguf").read_bytes() == b"GGUF"
    assert url == f"http://127.0.0.1:{opts['--port']}"
    assert not answers(url + "/v1/models", 0.5)  # stopped on the way out


def test_bench_serve_llamacpp_that_fails_to_start_exits_with_its_log(tmp_path, fake_python, monkeypatch):
    python, _ = fake_python
    monkeypatch.setenv("FAKE_EXIT", "1")
    with pytest.raises(SystemExit) as e, llm_client.llamacpp_serve(python, tmp_path):
        pass
    assert str(e.value).startswith("--serve: llama.cpp server exited 1") and "cannot load the model" in str(e.value)


@pytest.mark.parametrize(("args", "message"), [
    (["--serve", "llamacpp"], "--serve llamacpp: give --serve-python PATH"),
    (["--serve", "vllm", "--serve-python", "python"], "argument --serve: invalid choice: 'vllm'"),
    (["--url", "http://127.0.0.1:9", "--sut-param", "logprobs"], "--sut-param 'logprobs': expected KEY=VALUE"),
    (["--url", "http://127.0.0.1:9", "--sut-param", "http=aiohttp"], "--sut-param http: the bench sets it"),
])
def test_bench_serve_usage_errors_exit_2(args, message):
    bench = Path(llm_client.__file__)
    done = subprocess.run([sys.executable, str(bench), *args], capture_output=True, text=True, timeout=120,
                          cwd=bench.parents[1])
    assert done.returncode == 2, done.stderr
    assert message in done.stderr


def test_sut_params_are_passed_on_and_bench_keys_refused():
    assert llm_client.sut_params(["logprobs=1", "tokenizer=/x=y"]) == {"logprobs": "1", "tokenizer": "/x=y"}
    with pytest.raises(ValueError, match="the bench sets it"):
        llm_client.sut_params(["url=http://x"])


def test_request_bodies_are_what_proctor_sends_logprobs_included():
    """The bare client's bodies come from proctor's own config: today's bodies without --sut-param,
    and `logprobs` in each where proctor asks for them (a llama.cpp run), nothing else changed."""
    args = argparse.Namespace(url="http://127.0.0.1:9", model="tiny", tokens=16, sut_params={})
    plain = llm_client.request_bodies(args)  # no request is made (preflight=0)
    cfg = OpenAIConfig(urls=(args.url,), model="tiny", max_tokens=16)
    assert plain == [cfg.body(x) for x in load_dataset(("synthetic", 1024, "const:32", "const:16", 0))]
    args.sut_params = {"logprobs": "1"}
    asked = [orjson.loads(b) for b in llm_client.request_bodies(args)]
    assert asked == [{**orjson.loads(b), "logprobs": 1} for b in plain]
