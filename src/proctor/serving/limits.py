"""The bounds of a connection to proctor's servers (`proctor serve llm|node`), in one place: their
defaults, the checked value the command line builds, and the cap the descriptor limit allows.
Light (no aiohttp), so the command line's options read their defaults here; `serving.connections`
enforces them."""

from __future__ import annotations

from proctor.errors import ConfigError
from proctor.typed_records import record

HEADER_TIMEOUT_S = 10.0  # a request's first byte to the end of its head (a real client sends it in one write)
BODY_TIMEOUT_S = 60.0  # the head to the body's last byte (a 256 MiB node request at 5 MB/s)
IDLE_TIMEOUT_S = 75.0  # a kept-alive connection with no request (above the clients' 60 s keep-alive:
#                        the client closes first, so no request is sent into a closing connection)
SEND_TIMEOUT_S = 60.0  # a client that reads none of its answer this long
MAX_CONNECTIONS = 4096  # connections open at once; more are answered 503
FD_RESERVE = 64  # descriptors kept for the listener, timers, logs and the SUT under the cap
REFUSE_LINGER_S = 1.0  # a refused connection is read (and discarded) this long for its request
MAX_TIMEOUT_S = 86_400.0


@record(frozen=True, slots=True)
class ConnectionLimits:
    """The bounds of one server's connections (seconds, and a count)."""

    header_s: float = HEADER_TIMEOUT_S
    body_s: float = BODY_TIMEOUT_S
    idle_s: float = IDLE_TIMEOUT_S
    send_s: float = SEND_TIMEOUT_S
    max_connections: int = MAX_CONNECTIONS

    def __post_init__(self) -> None:
        for key, option in (("header_s", "--header-timeout"), ("body_s", "--body-timeout"),
                            ("idle_s", "--idle-timeout"), ("send_s", "--send-timeout")):
            v = getattr(self, key)
            if not 0 < v <= MAX_TIMEOUT_S:  # NaN fails too
                raise ConfigError(f"{option} {v}: expected seconds in (0, {MAX_TIMEOUT_S:g}]")
        if not 1 <= self.max_connections <= 1_000_000:
            raise ConfigError(f"--max-connections {self.max_connections}: expected 1..1000000")


def fd_cap(requested: int, reserve: int = FD_RESERVE) -> int:
    """The connection cap the process can hold: `requested`, lifting the soft open-file limit toward
    it where the hard limit allows, else what the limit leaves after `reserve`."""
    try:
        import resource
    except ImportError:  # not POSIX: no limit to read
        return requested
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = requested + reserve
        if soft != resource.RLIM_INFINITY and soft < want:
            new = want if hard == resource.RLIM_INFINITY else min(want, hard)
            if new > soft:
                resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
                soft = new
    except (ValueError, OSError):
        return requested
    if soft == resource.RLIM_INFINITY:
        return requested
    return max(1, min(requested, int(soft) - reserve))


__all__ = [
    "BODY_TIMEOUT_S",
    "HEADER_TIMEOUT_S",
    "IDLE_TIMEOUT_S",
    "MAX_CONNECTIONS",
    "SEND_TIMEOUT_S",
    "ConnectionLimits",
    "fd_cap",
]
