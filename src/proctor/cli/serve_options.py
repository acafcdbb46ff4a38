"""The options both `proctor serve` servers share: the bounds on their connections
(`serving.limits`), with the defaults read from there."""

from __future__ import annotations

from typing import Annotated

import typer

from proctor.serving.limits import (
    BODY_TIMEOUT_S,
    HEADER_TIMEOUT_S,
    IDLE_TIMEOUT_S,
    MAX_CONNECTIONS,
    SEND_TIMEOUT_S,
    ConnectionLimits,
)

HeaderTimeout = Annotated[float, typer.Option(
    "--header-timeout", metavar="S", help="seconds from a request's first byte to the end of its head")]
BodyTimeout = Annotated[float, typer.Option(
    "--body-timeout", metavar="S", help="seconds from a request's head to the last byte of its body")]
IdleTimeout = Annotated[float, typer.Option(
    "--idle-timeout", metavar="S", help="seconds a connection may wait for its (next) request")]
SendTimeout = Annotated[float, typer.Option(
    "--send-timeout", metavar="S", help="seconds a client may read none of its answer")]
MaxConnections = Annotated[int, typer.Option(
    "--max-connections", metavar="N", help="connections open at once; more are answered 503")]

EXAMPLE = "--header-timeout 5 --idle-timeout 30 --max-connections 1024"


def connection_limits(header_s: float, body_s: float, idle_s: float, send_s: float,
                      max_connections: int) -> ConnectionLimits:
    """The options' ConnectionLimits (a ConfigError names the option out of range)."""
    return ConnectionLimits(header_s=header_s, body_s=body_s, idle_s=idle_s, send_s=send_s,
                            max_connections=max_connections)


__all__ = ["BODY_TIMEOUT_S", "EXAMPLE", "HEADER_TIMEOUT_S", "IDLE_TIMEOUT_S", "MAX_CONNECTIONS", "SEND_TIMEOUT_S",
           "BodyTimeout", "HeaderTimeout", "IdleTimeout", "MaxConnections", "SendTimeout", "connection_limits"]
