"""A loopback server that speaks SearxNG's JSON API (`/search?q=…&format=json`) and serves the pages it
returns, recording every query: it stands in for a user's SearxNG instance, which cannot run here."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

PAGE = "<html><head><title>Analytical Engine</title></head><body><p>Charles Babbage designed the Analytical " \
       "Engine.</p></body></html>"


class SearxngDouble(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.queries: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: SearxngDouble

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802
        parts = urlsplit(self.path)
        if parts.path != "/search":
            self._send(PAGE.encode(), "text/html; charset=utf-8")
            return
        query = parse_qs(parts.query).get("q", [""])[0]
        self.server.queries.append(query)
        results = [{"url": f"{self.server.url}/page/1", "title": "Analytical Engine",
                    "content": "Charles Babbage designed the Analytical Engine.", "engine": "double"}]
        self._send(json.dumps({"query": query, "results": results}).encode(), "application/json")


@contextmanager
def searxng_double() -> Iterator[SearxngDouble]:
    server = SearxngDouble()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
