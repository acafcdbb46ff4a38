"""Binding (issue 22, class 7): loopback by default, an empty host refused, any wider bind warned
about, and control endpoints answering loopback peers (or the token) only."""

from __future__ import annotations

import subprocess
import sys

import pytest

from proctor.errors import ConfigError
from proctor.serving.binding import CONTROL_TOKEN_ENV, check_host, control_allowed, is_loopback


@pytest.mark.parametrize("host", ["127.0.0.1", "127.1.2.3", "::1", "localhost", "::ffff:127.0.0.1"])
def test_loopback_binds_are_quiet(host):
    assert is_loopback(host) and check_host(host) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.org", "10.0.0.1"])
def test_wider_binds_warn(host):
    warning = check_host(host)
    assert warning is not None and host in warning and "other machines" in warning


@pytest.mark.parametrize("host", ["", "  ", "a b", "x\ny"])
def test_empty_or_malformed_hosts_are_refused(host):
    with pytest.raises(ConfigError):
        check_host(host)


def test_control_endpoints_answer_loopback_or_the_token(monkeypatch):
    monkeypatch.delenv(CONTROL_TOKEN_ENV, raising=False)
    assert control_allowed("127.0.0.1", None) and control_allowed("::1", None)
    assert not control_allowed("192.168.1.5", None) and not control_allowed(None, "Bearer x")
    monkeypatch.setenv(CONTROL_TOKEN_ENV, "s3cret")
    assert control_allowed("192.168.1.5", "Bearer s3cret")
    assert not control_allowed("192.168.1.5", "Bearer wrong") and not control_allowed("192.168.1.5", None)


@pytest.mark.parametrize("cmd", [["serve", "llm"], ["serve", "node"]])
def test_serve_refuses_an_empty_host_in_one_line(cmd):
    proc = subprocess.run([sys.executable, "-m", "proctor", *cmd, "--host", "", "--port", "0"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "--host ''" in proc.stderr and "Traceback" not in proc.stderr


def test_stats_reset_refuses_a_remote_peer():
    """The handler itself, with a request whose peer is not loopback."""
    import asyncio

    from aiohttp.test_utils import make_mocked_request

    from proctor.serving.llm_server import LLMServer, ServerOptions

    async def go(peer: str) -> int:
        server = LLMServer(ServerOptions())
        resp = await server._reset(make_mocked_request("POST", "/stats/reset", transport=_Transport(peer)))
        return resp.status

    assert asyncio.run(go("192.168.1.7")) == 403
    assert asyncio.run(go("127.0.0.1")) == 200


class _Transport:
    def __init__(self, peer: str) -> None:
        self.peer = peer

    def get_extra_info(self, name: str, default=None):  # noqa: ANN001
        return (self.peer, 12345) if name == "peername" else default

    def is_closing(self) -> bool:
        return False
