"""Where proctor's servers may listen and who may drive their control endpoints.

Loopback is the default. An empty host (every interface, IPv4 and IPv6 on separate sockets) is
refused: say 0.0.0.0 or :: when that is meant. Any bind beyond loopback prints a warning. Control
endpoints (resetting the counters) answer loopback peers, or a peer that sends the token in
PROCTOR_CONTROL_TOKEN as `Authorization: Bearer <token>`.
"""

from __future__ import annotations

import hmac
import ipaddress
import os

from proctor.errors import ConfigError

CONTROL_TOKEN_ENV = "PROCTOR_CONTROL_TOKEN"
_LOOPBACK_NAMES = ("localhost", "localhost.")


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 (also IPv4-mapped) and the name localhost."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        addr = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(addr, "ipv4_mapped", None)
    return bool(addr.is_loopback or (mapped is not None and mapped.is_loopback))


def check_host(host: str, option: str = "--host") -> str | None:
    """Validate a bind address; the warning to print when it reaches beyond loopback, else None.
    Raises ConfigError for an empty or malformed address."""
    if not host.strip():
        raise ConfigError(
            f"{option} '': an empty address binds every interface; give 127.0.0.1 (this machine) "
            "or 0.0.0.0 / :: (every interface) explicitly", key=option,
        )
    if len(host) > 255 or any(c.isspace() or not c.isprintable() for c in host):
        raise ConfigError(f"{option} {host[:60]!r}: not a host name or address", key=option)
    if is_loopback(host):
        return None
    return (
        f"warning: listening on {host}, reachable from other machines; it has no authentication "
        "(use --host 127.0.0.1 unless you mean it)"
    )


def control_allowed(peer: str | None, authorization: str | None) -> bool:
    """May this peer use a control endpoint: a loopback peer, or one that sends the token."""
    if peer is not None and is_loopback(peer):
        return True
    token = os.environ.get(CONTROL_TOKEN_ENV, "")
    if not token or not authorization:
        return False
    return hmac.compare_digest(authorization.encode(), f"Bearer {token}".encode())


__all__ = ["CONTROL_TOKEN_ENV", "check_host", "control_allowed", "is_loopback"]
