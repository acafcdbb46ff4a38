"""The URLs proctor's clients accept: http(s)://HOST[:PORT][/path], the port a number in 1..65535,
the host in ASCII (a request head is Latin-1; an IDN host goes in its xn-- form). Checked before a
run starts, so a typo is one line naming the key, not thousands of failed connections."""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit

from proctor.errors import ConfigError


def check_http_url(url: str, key: str, example: str = "http://HOST:PORT") -> SplitResult:
    """`url` split, or ConfigError(key) saying what is wrong with it and what to give."""
    shown = url[:200]
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:  # a port that is not a number or out of range
        raise ConfigError(f"{key}={shown!r}: {exc}; expected {example} with a port in 1..65535", key=key) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{key}={shown!r}: expected {example}", key=key)
    if port == 0:
        raise ConfigError(f"{key}={shown!r}: port 0 cannot be connected to; give the server's port", key=key)
    host = parts.hostname
    if not host.isascii():
        try:
            hint = f"; its ASCII form is {host.encode('idna').decode()}"
        except UnicodeError:
            hint = ""
        raise ConfigError(f"{key}={shown!r}: the host must be ASCII{hint}", key=key)
    if any(c.isspace() or not c.isprintable() for c in url):
        raise ConfigError(f"{key}={shown!r}: a URL has no spaces or control characters", key=key)
    return parts


__all__ = ["check_http_url"]
