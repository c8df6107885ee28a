"""A shared headless Chromium (Debian's, via Playwright) for pages that need JavaScript.

Chromium gets no network of its own: its resolver maps every name to NOTFOUND and each request it
makes is answered through the guarded fetcher (route → fulfill), so the SSRF policy, size limits and
redirect checks apply to every document, script and XHR exactly as on the fast path. Images, media,
fonts and stylesheets are not fetched at all (the text does not need them).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from deepresearch.tools.base import ToolFailure
from deepresearch.tools.browser.fetch import Fetched, Fetcher
from deepresearch.tools.config import BrowserSettings

SKIPPED_RESOURCES = frozenset(
    {"image", "media", "font", "stylesheet", "imageset", "texttrack", "websocket", "eventsource"}
)
DEAD_HOST_TTL_S = 300.0
_HOP_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive"})


@dataclass
class Rendered:
    url: str
    html: str


class _Tab:
    """A context with one page, reused across renders (opening a new page costs more than a render)."""

    def __init__(self, context: Any, page: Any):
        self.context = context
        self.page = page
        self.navigation_errors: list[ToolFailure] = []
        # Per render: when every request it makes must be answered by, and the page the fast path
        # already fetched (served to the first navigation instead of fetching it a second time).
        self.deadline: float | None = None
        self.document: Fetched | None = None


def _same_document(a: str, b: str) -> bool:
    """Whether Chromium's request URL is the URL we fetched (it drops the fragment, adds a root '/')."""
    pa, pb = urlsplit(a), urlsplit(b)
    return (pa.scheme, pa.netloc, pa.path or "/", pa.query) == (pb.scheme, pb.netloc, pb.path or "/", pb.query)


class BrowserPool:
    def __init__(self, settings: BrowserSettings, fetcher: Fetcher):
        self.settings = settings
        self.fetcher = fetcher
        self._playwright: Any = None
        self._browser: Any = None
        self._launch_lock = asyncio.Lock()
        self._slots = asyncio.Semaphore(settings.pool_size)
        self._idle: list[_Tab] = []
        self._dead_hosts: dict[str, float] = {}
        self.launches = 0

    async def _ensure_browser(self) -> Any:
        async with self._launch_lock:
            if self._browser is not None and self._browser.is_connected():
                return self._browser
            if not self.settings.chromium_path.is_file():
                raise ToolFailure("unavailable", f"Chromium not found at {self.settings.chromium_path}")
            from playwright.async_api import async_playwright

            if self._playwright is None:
                self._playwright = await async_playwright().start()
            self._idle.clear()  # tabs of a crashed browser are gone with it
            # No resolver (every request goes through our fetcher) and no image decoding (text is the goal).
            args = [
                *self.settings.chromium_args, "--host-resolver-rules=MAP * ~NOTFOUND",
                "--blink-settings=imagesEnabled=false",
            ]
            self._browser = await self._playwright.chromium.launch(
                executable_path=str(self.settings.chromium_path), args=args, headless=True
            )
            self.launches += 1
            return self._browser

    async def _new_tab(self, browser: Any) -> _Tab:
        context = await browser.new_context(
            user_agent=self.settings.user_agent, service_workers="block", accept_downloads=False
        )
        tab = _Tab(context, page=None)

        async def answer(route: Any) -> None:
            request = route.request
            if request.resource_type in SKIPPED_RESOURCES or request.method not in ("GET", "HEAD"):
                await route.abort("blockedbyclient")
                return
            host = urlsplit(request.url).hostname or ""
            main_frame = request.is_navigation_request() and request.frame.parent_frame is None
            if not main_frame and self._dead_hosts.get(host, 0.0) > time.monotonic():
                await route.abort("namenotresolved")  # ad-heavy pages ask the same dead host dozens of times
                return
            document = tab.document
            if main_frame and document is not None and _same_document(request.url, document.url):
                tab.document = None  # once: a reload or a script's navigation to it fetches afresh
                headers = {k: v for k, v in document.headers.items() if k.lower() not in _HOP_HEADERS}
                await route.fulfill(status=document.status, headers=headers, body=document.body)
                return
            try:
                hop = await self.fetcher.hop(request.url, deadline=tab.deadline)
            except ToolFailure as exc:
                if main_frame:
                    tab.navigation_errors.append(exc)
                elif exc.kind == "network" and "cannot resolve" in exc.message:
                    self._dead_hosts[host] = time.monotonic() + DEAD_HOST_TTL_S
                await route.abort("blockedbyclient" if exc.kind == "blocked" else "failed")
                return
            headers = {k: v for k, v in hop.headers.items() if k.lower() not in _HOP_HEADERS}
            await route.fulfill(status=hop.status, headers=headers, body=hop.body)

        await context.route("**/*", answer)
        tab.page = await context.new_page()
        return tab

    async def render(self, url: str, *, deadline: float, document: Fetched | None = None) -> Rendered:
        """Load `url` in a pooled tab; raises TimeoutError at `deadline` (event-loop time), which covers
        waiting for a slot, starting Chromium and every request the page makes. `document`, when given,
        is the already fetched response for `url`, served to the navigation instead of a second fetch."""
        async with asyncio.timeout_at(deadline), self._slots:
            browser = await self._ensure_browser()
            return await self._render_in_tab(browser, url, deadline, document)

    async def _render_in_tab(self, browser: Any, url: str, deadline: float, document: Fetched | None) -> Rendered:
        tab = self._idle.pop() if self._idle else await self._new_tab(browser)
        tab.navigation_errors.clear()
        tab.deadline, tab.document = deadline, document
        healthy = False
        try:
            left_s = deadline - asyncio.get_running_loop().time()
            try:
                await tab.page.goto(url, wait_until="load", timeout=max(left_s, 0.001) * 1000)
            except Exception as exc:
                if tab.navigation_errors:
                    raise tab.navigation_errors[0] from None
                raise ToolFailure("render_failed", f"Chromium could not load {url}: {_first_line(exc)}") from None
            if tab.navigation_errors:  # e.g. a redirect hop that the policy refused
                raise tab.navigation_errors[0]
            settle_s = min(self.settings.render_settle_s, deadline - asyncio.get_running_loop().time())
            if settle_s > 0:  # let scripts that fetch content after load finish
                with contextlib.suppress(Exception):
                    await tab.page.wait_for_load_state("networkidle", timeout=settle_s * 1000)
            rendered = Rendered(url=tab.page.url, html=await tab.page.content())
            healthy = True
            return rendered
        finally:
            tab.document = None
            if healthy:
                self._idle.append(tab)
            else:  # a tab that failed or was cancelled mid-load is not reused
                with contextlib.suppress(Exception):
                    await tab.context.close()

    async def close(self) -> None:
        for tab in self._idle:
            with contextlib.suppress(Exception):
                await tab.context.close()
        self._idle.clear()
        if self._browser is not None:
            with contextlib.suppress(Exception):
                await self._browser.close()
            self._browser = None
        if self._playwright is not None:
            with contextlib.suppress(Exception):
                await self._playwright.stop()
            self._playwright = None


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
