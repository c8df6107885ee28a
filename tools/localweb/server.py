"""LocalWebServer: serve one index over HTTP on 127.0.0.1 from a background thread.

    with LocalWebServer(index) as web:          # free port picked by the OS
        settings.search.searxng_url = web.url   # the real SearxNG backend + browser now work offline
"""

from __future__ import annotations

import hashlib
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

from deepresearch.tools.index.local_index import LocalIndex
from deepresearch.tools.localweb import pages

RESULTS_PER_PAGE = 10
MAX_PAGES = 10


class _Handler(BaseHTTPRequestHandler):
    server: _IndexHTTPServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as two writes; Nagle would hold the second 40 ms

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet: tests and evals
        pass

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self) -> None:  # noqa: N802 - http.server naming
        self.do_GET()

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        parts = urlsplit(self.path)
        index = self.server.index
        if parts.path == "/":
            self._send(200, pages.home_page(index.name, index.bm25.count()), "text/html; charset=utf-8")
        elif parts.path == "/robots.txt":
            self._send(200, b"User-agent: *\nAllow: /\n", "text/plain; charset=utf-8")
        elif parts.path == "/search":
            self._search(parse_qs(parts.query))
        elif parts.path.startswith("/doc/"):
            doc = index.get(unquote(parts.path[len("/doc/"):]))
            if doc is None:
                self._send(404, pages.not_found_page(parts.path), "text/html; charset=utf-8")
            else:
                self._send(200, pages.document_page(doc), "text/html; charset=utf-8")
        else:
            self._send(404, pages.not_found_page(parts.path), "text/html; charset=utf-8")

    def _search(self, params: dict[str, list[str]]) -> None:
        query = (params.get("q") or [""])[0].strip()
        fmt = (params.get("format") or ["html"])[0]
        try:
            page = min(max(1, int((params.get("pageno") or ["1"])[0])), MAX_PAGES)
        except ValueError:
            page = 1
        found = self.server.index.search(query, RESULTS_PER_PAGE * page) if query else []
        hits = found[RESULTS_PER_PAGE * (page - 1) :]
        if fmt == "json":
            base = f"http://{self.headers.get('Host') or self.server.authority}"
            self._send(200, pages.searxng_json(query, hits, base), "application/json")
        else:
            self._send(200, pages.search_page(self.server.index.name, query, hits), "text/html; charset=utf-8")


class _IndexHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], index: LocalIndex):
        super().__init__(address, _Handler)
        self.index = index

    @property
    def authority(self) -> str:
        host, port = self.server_address[:2]
        return f"{host}:{port}"


SITE_PORTS = (20000, 32000)  # below Linux's ephemeral range, so an outgoing connection rarely holds one


def site_port(name: str) -> int:
    """The port the local site `name` is served on: derived from the name, so the URLs the agent reads (and
    with them its prompts, traces and training samples) are the same in every process; an OS-chosen free
    port when that one is taken (e.g. two evals of one corpus at once)."""
    low, high = SITE_PORTS
    preferred = low + int(hashlib.sha256(name.encode()).hexdigest()[:8], 16) % (high - low)
    for port in (preferred, 0):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            # As the server binds: a port a finished process left in TIME_WAIT is free to reuse.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return sock.getsockname()[1]
    raise OSError("no free port on 127.0.0.1")


class LocalWebServer:
    def __init__(self, index: LocalIndex, *, host: str = "127.0.0.1", port: int = 0):
        self.index = index
        self.host = host
        self.port = port
        self._server: _IndexHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the local web server is not running")
        return f"http://{self._server.authority}"

    def start(self) -> LocalWebServer:
        if self._server is not None:
            return self
        self._server = _IndexHTTPServer((self.host, self.port), self.index)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, name="localweb", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def serve_forever(self) -> None:
        """Block serving (the CLI); Ctrl-C stops it."""
        self.start()
        assert self._thread is not None
        try:
            while self._thread.is_alive():
                self._thread.join(timeout=0.5)
        finally:
            self.stop()

    def __enter__(self) -> LocalWebServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
