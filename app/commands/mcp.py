"""`deepresearch mcp`: an MCP server (stdio by default, or streamable HTTP) with the tools research,
search_index and get_report, for Claude Desktop, Cursor or another agent.

Exit codes: 0 stopped · 2 bad settings, a non-loopback address without api.token, or the address
cannot be listened on.
"""

from __future__ import annotations

import hmac
import sys
from typing import Any

import typer

from ..console import err, fail
from ..settings import get_settings
from .serve import listen_socket, run_until_stopped, url_of


class BearerGuard:
    """ASGI middleware: every request needs `Authorization: Bearer <token>` (401 otherwise)."""

    def __init__(self, app: Any, token: str):
        self.app, self.token = app, token.encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, b"Bearer " + self.token):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": b'{"detail": "missing or wrong bearer token"}'})
                return
        await self.app(scope, receive, send)


def mcp(
    transport: str = typer.Option("stdio", "--transport", "-t", help="stdio (a client starts this command) or "
                                  "http (streamable HTTP at /mcp)"),
    host: str | None = typer.Option(None, "--host", help="http: address to listen on (default from settings: "
                                    "{settings.api.host}); off loopback, api.token is required"),
    port: int = typer.Option(8765, "--port", min=0, max=65535, help="http: TCP port (0 = any free port)"),
) -> None:
    """Serve the MCP tools research (with progress notifications), search_index and get_report."""
    if transport not in ("stdio", "http"):
        raise fail(f"--transport: '{transport}' is not one of stdio, http")
    from ..service.mcp_server import build_server

    settings = get_settings()
    server = build_server(settings)
    if transport == "stdio":
        import anyio

        from ..service.mcp_stdio import serve_stdio

        # The SDK keeps stdout for JSON-RPC (anything else printed goes to stderr); every line gets an answer.
        anyio.run(serve_stdio, server)
        return

    from ..service.config import BindError, check_bind

    host = host or settings.api.host
    try:
        token = check_bind(host, settings.api.token)
    except BindError as exc:
        raise fail(str(exc)) from None
    sock = listen_socket(host, port)
    app: Any = server.streamable_http_app(host=host)
    if token:
        app = BearerGuard(app, token)
    url = url_of(sock)
    err.print(f"MCP server (streamable HTTP) at {url}/mcp{' with a bearer token' if token else ''} — Ctrl-C to stop",
              markup=False, highlight=False)
    sys.stderr.flush()
    run_until_stopped(app, sock)


MCP_EXAMPLES = """Examples:
  deepresearch mcp                         (stdio: what a client config runs)
  deepresearch mcp -t http --port 8765     (streamable HTTP at /mcp)
Claude Desktop (claude_desktop_config.json):
  {"mcpServers": {"deepresearch":
    {"command": ".venv/bin/deepresearch", "args": ["mcp"]}}}
Exit codes: 0 stopped · 2 bad settings, no token off loopback, or a busy port"""


def register(app: typer.Typer) -> None:
    app.command("mcp", epilog=MCP_EXAMPLES)(mcp)
