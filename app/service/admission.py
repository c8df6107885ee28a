"""Which requests the HTTP API admits before any route sees them (ASGI middleware, `Admission`).

A body over the cap is refused (413, one JSON line): at once when its declared length says so, else when
the bytes received pass it (Starlette's own limit answers in plain text, and replaces the app's answer).

A server on loopback answers this machine's clients only, not a web page that reaches it through the
user's browser.

Without it a tokenless `serve` on 127.0.0.1 could be driven from any web page: by DNS rebinding (a page's own
host name re-pointed at 127.0.0.1, so the browser sends `Host: evil.example` and lets the page read the
answers) or by a cross-origin POST (the browser sends it; the page cannot read the answer, but the run
starts). So, on loopback, a request must name this machine in `Host` (a loopback address or `localhost`,
never resolved: resolving is what rebinding fools), and a browser request must come from this server's
own origin (`Origin`, and `Sec-Fetch-Site` where the browser sends it). Clients that are not browsers
(curl, httpx, the MCP SDK) send neither Origin nor Sec-Fetch-Site, and are unaffected.
"""

from __future__ import annotations

import ipaddress
import json
from typing import Any
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.exceptions import HTTPException

CROSS_SITE = {"cross-site", "same-site"}  # same-site: another port of this host, e.g. another local web app


def host_name(host: str) -> str:
    """The name part of a Host header value ("[::1]:8080" → "::1", "localhost:80" → "localhost")."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def is_loopback_name(name: str) -> bool:
    name = name.rstrip(".")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def refusal(headers: Headers) -> tuple[int, str] | None:
    """(status, detail) when a request to a loopback server must be refused, else None."""
    host = headers.get("host")
    if host is not None and not is_loopback_name(host_name(host)):
        return 421, (f"this server answers requests for localhost only, not for host '{host}' "
                     "(a web page may be trying to reach it by DNS rebinding)")
    origin = headers.get("origin")
    if origin is not None:
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or host is None or parts.netloc.lower() != host.strip().lower():
            return 403, f"cross-origin request refused: a page of {origin} may not use this server"
    if headers.get("sec-fetch-site", "").lower() in CROSS_SITE:
        return 403, "cross-site request refused: a page of another site may not use this server"
    return None


def too_large(headers: Headers, max_body: int) -> tuple[int, str] | None:
    declared = headers.get("content-length", "")
    if declared.isascii() and declared.isdecimal() and int(declared) > max_body:
        return 413, f"the request body is {int(declared):,} bytes; at most {max_body:,} are accepted"
    return None


class Admission:
    """ASGI middleware: 413 for a declared body over `max_body`; with `local_only` (a server on loopback),
    `refusal` too (421 or 403). Every refusal is `{"detail": "one line"}`."""

    def __init__(self, app: Any, *, max_body: int, local_only: bool):
        self.app, self.max_body, self.local_only = app, max_body, local_only

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        refused = None
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            refused = (self.local_only and refusal(headers)) or too_large(headers, self.max_body)
        if refused:
            status, detail = refused
            body = json.dumps({"detail": detail}).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        received = 0

        async def counted() -> dict[str, Any]:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > self.max_body:  # FastAPI re-raises an HTTPException met while reading a body
                raise HTTPException(413, f"the request body is over {self.max_body:,} bytes")
            return message

        await self.app(scope, counted, send)
