"""One deadline per `open` call: robots.txt, the fetch, the PDF parse and the Chromium render share `timeout_s`.

Loopback servers trickle robots.txt and pages and serve a script that never finishes; before, each
phase had a fresh allowance of its own (a 20 s limit took 53 s) and Chromium fetched the page again.
A PDF that is slow to parse was read on the event loop, past any deadline (41.6 s under a 5 s limit).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from deepresearch.tools.base import ToolOutcome
from deepresearch.tools.browser.tool import BrowserTool
from deepresearch.tools.config import BrowserSettings

from . import servers

# A page that needs JavaScript, whose one script never finishes downloading: the load event never comes.
HANGING_SCRIPT_PAGE = (
    b"<html><head><title>Hangs</title></head><body><div id='app'></div><script src='/slow.js'></script></body></html>"
)


def _trickle(body: bytes, content_type: str, for_s: float | None) -> servers.Route:
    """A route sending a byte every 0.2 s for `for_s` seconds (None: until the server stops), then `body`."""

    def route(handler: servers.ScriptedHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        until = time.monotonic() + (for_s if for_s is not None else 1e9)
        while time.monotonic() < until and not handler.server.stopping.is_set():
            handler.wfile.write(b"1\r\n \r\n")
            handler.wfile.flush()
            time.sleep(0.2)
        handler.wfile.write(f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n")

    return route


@contextmanager
def serve(routes: dict[str, servers.Route]) -> Iterator[servers.ScriptedServer]:
    server = servers.ScriptedServer(routes)
    thread = servers.start(server)
    try:
        yield server
    finally:
        servers.stop(server, thread)


async def _open(server: servers.ScriptedServer, path: str, timeout_s: float) -> tuple[ToolOutcome, float]:
    tool = BrowserTool(BrowserSettings(allow_hosts=[server.authority], timeout_s=timeout_s, render_settle_s=0.3))
    try:
        start = time.perf_counter()
        out = await tool.invoke({"url": server.base + path})
        return out, time.perf_counter() - start
    finally:
        await tool.close()


async def test_slow_robots_slow_page_and_a_hanging_render_end_at_one_deadline():
    # Each phase alone fits in the 4 s limit (robots 3 s, page 2.5 s); together with the render they do not.
    with serve({
        "/robots.txt": _trickle(b"User-agent: *\nAllow: /\n", "text/plain", for_s=3),
        "/hangs": _trickle(HANGING_SCRIPT_PAGE, "text/html", for_s=2.5),
        "/slow.js": _trickle(b"", "application/javascript", for_s=None),
    }) as site:
        out, took = await _open(site, "/hangs", timeout_s=4)
    assert out.error_kind == "timeout", out
    assert took < 4 + 1.0, f"{took:.1f}s for a 4 s limit"  # not 4 s per phase
    assert site.hits.get("/robots.txt") == 1 and site.hits.get("/hangs") == 1  # Chromium did not fetch it again


async def test_slow_robots_leaves_the_page_its_time_and_chromium_reuses_the_fetch():
    with serve({"/robots.txt": servers.trickle_forever, "/js-page": lambda h: h.send(200, servers.JS_ONLY)}) as site:
        out, took = await _open(site, "/js-page", timeout_s=8)
    assert out.ok, out.error
    assert out.output["method"] == "chromium" and "arctic terns" in out.output["text"]
    assert 1.8 < took < 8  # robots.txt took its share (a quarter), not the whole limit
    assert site.hits.get("/js-page") == 1  # the render was served the page the fast path had fetched


def _children_running(script: str) -> list[int]:
    """Our child processes whose command line names `script`."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                ppid = int(Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[1])
                cmdline = Path(entry.path, "cmdline").read_bytes()
            except (OSError, IndexError, ValueError):
                continue
            if ppid == os.getpid() and script.encode() in cmdline:
                found.append(int(entry.name))
    return found


async def test_a_pdf_that_is_slow_to_parse_ends_at_the_deadline():
    slow = servers.slow_pdf(60)  # ~14 KB, ~15 s of pypdf (it stops at twice max_text_chars)
    assert len(slow) < 30_000
    with serve({"/slow.pdf": lambda h: h.send(200, slow, "application/pdf"),
                "/ok.pdf": lambda h: h.send(200, servers.make_pdf(["Kelp grows fast."], "Kelp"), "application/pdf")},
               ) as site:
        out, took = await _open(site, "/slow.pdf", timeout_s=3)
        assert out.error_kind == "timeout", out
        assert took < 3 + 1.0, f"{took:.1f}s for a 3 s limit"
        assert _children_running("extract/pdf.py") == []  # the parser was killed, not left running
        out, _ = await _open(site, "/ok.pdf", timeout_s=10)  # a readable PDF still reads
    assert out.ok and out.output["method"] == "pdf" and out.output["title"] == "Kelp", out
    assert "Kelp grows fast." in out.output["text"]
