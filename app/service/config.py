"""Settings of the HTTP API and the MCP server's HTTP transport, and the bind rule they share."""

from __future__ import annotations

import ipaddress
import socket

from pydantic import BaseModel, ConfigDict, Field, SecretStr


class ApiSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    host: str = Field("127.0.0.1", description="address `serve` and `mcp --transport http` listen on")
    port: int = Field(8080, ge=0, le=65535, description="TCP port of `serve` (0 = any free port)")
    # SecretStr: masked in every settings dump, so a run's settings snapshot never holds it.
    token: SecretStr | None = Field(None, description="bearer token clients must send; required off loopback")
    max_concurrent_runs: int = Field(2, ge=1, description="runs researched at once; later ones wait their turn")


class BindError(ValueError):
    """The server would listen beyond this machine without a token (exit 2, nothing started)."""


def is_loopback(host: str) -> bool:
    """True when every address `host` names is a loopback address (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:  # a host name: loopback only if everything it resolves to is
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0]).is_loopback for i in infos)


def check_bind(host: str, token: SecretStr | None) -> str | None:
    """The token the server enforces (None = open), or BindError when off loopback without one."""
    value = token.get_secret_value() if token is not None else ""
    if value:
        return value
    if not is_loopback(host):
        raise BindError(f"refusing to listen on {host} without a token: anyone who can reach it could run "
                        f"research and read every report. Set api.token (env DEEPRESEARCH_API__TOKEN) "
                        f"or bind to 127.0.0.1")
    return None
