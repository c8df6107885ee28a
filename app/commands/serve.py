"""`deepresearch serve`: the HTTP API (start runs, stream their events, review plans, fetch reports).

Exit codes: 0 stopped (Ctrl-C, SIGTERM) · 2 bad settings, a non-loopback address without api.token, or
the address cannot be listened on.
"""

from __future__ import annotations

import signal
import socket
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import typer

from ..console import err, fail, out
from ..settings import get_settings


def listen_socket(host: str, port: int) -> socket.socket:
    """A listening socket: a busy port is one clear line before anything starts, port 0 is known, and a client
    that connects as soon as the URL is printed waits in the backlog until the server accepts."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def run_until_stopped(app: Any, sock: socket.socket, on_stop: Callable[[], None] | None = None) -> None:
    """Serve `app` on the listening socket until Ctrl-C or SIGTERM, then return (exit 0). `on_stop` runs as
    soon as the stop signal arrives (from its handler: it may only schedule work), before the server waits
    for open connections; the grace period bounds how long it waits for them."""
    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            super().handle_exit(sig, frame)
            if on_stop is not None:
                on_stop()

    # Once shut down, uvicorn raises the stop signal again under the handlers it found: with these, that is
    # a plain return ("stopped", exit 0), not death by SIGTERM (-15) or a KeyboardInterrupt traceback.
    previous = {sig: signal.signal(sig, lambda *_: None) for sig in (signal.SIGINT, signal.SIGTERM)}
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=3)
    try:
        Server(config).run(sockets=[sock])
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()


def serve(
    host: str | None = typer.Option(None, "--host", help="address to listen on (default from settings: "
                                    "{settings.api.host}); off loopback, api.token is required"),
    port: int | None = typer.Option(None, "--port", min=0, max=65535, help="TCP port (0 = any free port; "
                                    "default from settings: {settings.api.port})"),
) -> None:
    """Serve the HTTP API: POST /runs, GET /runs/{id}/events (SSE), POST /runs/{id}/plan, GET
    /runs/{id}/report, GET /runs, POST /runs/{id}/feedback. API reference at /docs (works offline)."""

    from ..service.api import create_app, stop_runs_soon
    from ..service.config import BindError, check_bind, is_loopback

    settings = get_settings()
    host = host or settings.api.host
    port = settings.api.port if port is None else port
    try:
        token = check_bind(host, settings.api.token)
    except BindError as exc:
        raise fail(str(exc)) from None
    sock = listen_socket(host, port)
    # On loopback, requests must name this machine and come from no other site's page (DNS rebinding, CSRF).
    app = create_app(settings, token=token, max_concurrent=settings.api.max_concurrent_runs,
                     local_only=is_loopback(host))
    url = url_of(sock)
    out.print(f"serving the deepresearch API at {url} (docs: {url}/docs){' with a bearer token' if token else ''}"
              " — Ctrl-C to stop", markup=False, highlight=False)
    sys.stdout.flush()
    run_until_stopped(app, sock, on_stop=lambda: stop_runs_soon(app))
    err.print("stopped", highlight=False)


SERVE_EXAMPLES = """Examples:
  deepresearch serve              (http://127.0.0.1:8080, docs at /docs)
  curl localhost:8080/runs -d '{"question": "…"}' -H 'content-type: application/json'
  curl -N localhost:8080/runs/RUN_ID/events         (SSE, until RunFinished)
  curl localhost:8080/runs/RUN_ID/report?format=html       (md pdf json)
  DEEPRESEARCH_API__TOKEN=secret deepresearch serve --host 0.0.0.0
Exit codes: 0 stopped · 2 bad settings, no token off loopback, or a busy port"""


def register(app: typer.Typer) -> None:
    app.command("serve", epilog=SERVE_EXAMPLES)(serve)
