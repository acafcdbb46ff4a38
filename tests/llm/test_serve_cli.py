"""`proctor serve llm`: bad options are one line and exit 2; the server answers on loopback."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys

import aiohttp
import orjson
import pytest

from proctor.serving.llm_server import TinyLM


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--chunk", "a-b"], "--chunk"),
        (["--chunk", "3-1"], "chunk"),
        (["--timing", "fast"], "timing"),
        (["--usage", "sometimes"], "usage"),
        (["--faults", "429=2"], "faults"),
        (["--faults", "boom=0.1"], "faults"),
        (["--port", "70000"], "--port"),
        (["--vocab", "3"], "vocab"),
    ],
)
def test_bad_options(cli, args, words):
    r = cli("serve", "llm", *args)
    assert r.rc == 2 and words in r.err and "Traceback" not in r.err


async def _ask(port: int) -> tuple[dict, list[bytes]]:
    async with aiohttp.ClientSession() as s:
        async with s.post(f"http://127.0.0.1:{port}/v1/completions",
                          json={"prompt": "ba de", "max_tokens": 5}) as r:
            full = await r.json()
        async with s.post(f"http://127.0.0.1:{port}/v1/chat/completions",
                          json={"messages": [{"role": "user", "content": "ba de"}], "max_tokens": 5,
                                "stream": True}) as r:
            raw = await r.read()
    return full, [line for line in raw.split(b"\n\n") if line]


def test_served_as_a_process(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "proctor", "serve", "llm", "--port", "0", "--ttft-ms", "1", "--tpot-ms", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        assert m, line + proc.stderr.read()
        full, events = asyncio.run(asyncio.wait_for(_ask(int(m.group(1))), 30))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert full["choices"][0]["text"] == TinyLM().reference("ba de", 5)
    assert full["usage"]["completion_tokens"] == 5
    assert events[-1] == b"data: [DONE]"
    first = orjson.loads(events[0][len(b"data: "):])
    assert first["choices"][0]["delta"] == {"role": "assistant", "content": ""}
