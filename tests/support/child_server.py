"""A third-party server as a bounded child process, for the tests and the benches alike.

`child_server(...)` starts the command (its output to a log file), polls a URL until it answers
200, yields, and stops the process afterwards (terminate, then kill), also when the body raises
(a failed test, the bench's SIGTERM turned into SystemExit). A server that exits or does not
answer in time raises ServerStartError with the tail of its log, never a hang.
"""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

LOG_TAIL = 2000  # characters of the server's log quoted when it does not start
STOP_S = 20.0  # terminate, wait this long, then kill


class ServerStartError(RuntimeError):
    """The server exited, or did not answer its ready URL in time."""


def free_port() -> int:
    """A loopback port free right now (the server binds it a moment later)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def log_tail(log: Path) -> str:
    try:
        with log.open("rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - LOG_TAIL))
            return f.read().decode(errors="replace")
    except OSError as e:
        return f"(no log: {e})"


def answers(url: str, timeout_s: float = 2.0) -> bool:
    """True when GET url answers 200 (bounded; nothing is read)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as r:
            return bool(r.status == 200)
    except OSError:
        return False


def stop(proc: subprocess.Popen[bytes], stop_s: float = STOP_S) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=stop_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=stop_s)


@contextmanager
def child_server(
    name: str, cmd: list[str], ready_url: str, log: Path, start_s: float,
    env: Mapping[str, str] | None = None, poll_s: float = 0.5,
) -> Iterator[subprocess.Popen[bytes]]:
    """Run `cmd` (a server named `name` in messages) with its output in `log`; yield the process
    once GET `ready_url` answers 200 within `start_s`; stop it afterwards."""
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, env=None if env is None else dict(env), stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + start_s
        while not answers(ready_url):
            if proc.poll() is not None:
                raise ServerStartError(f"{name} exited {proc.returncode} before answering {ready_url}: "
                                       f"{log_tail(log)}")
            if time.monotonic() > deadline:
                raise ServerStartError(f"{name} did not answer {ready_url} in {start_s:g} s: {log_tail(log)}")
            time.sleep(poll_s)
        yield proc
    finally:
        stop(proc)


__all__ = ["ServerStartError", "answers", "child_server", "free_port", "stop"]
