"""robots.txt, fetched once per origin through the guarded fetcher and cached."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

from deepresearch.tools.base import ToolFailure
from deepresearch.tools.browser.fetch import Fetcher

ROBOTS_MAX_BYTES = 512_000
AGENT_TOKEN = "deepresearch"


class RobotsCache:
    def __init__(self, fetcher: Fetcher):
        self.fetcher = fetcher
        self._parsers: dict[str, RobotFileParser | None] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def _parser(self, origin: str, deadline: float | None) -> RobotFileParser | None:
        lock = self._locks.setdefault(origin, asyncio.Lock())
        async with lock:
            if origin not in self._parsers:
                self._parsers[origin] = await self._load(origin, deadline)
            return self._parsers[origin]

    async def _load(self, origin: str, deadline: float | None) -> RobotFileParser | None:
        try:
            fetched = await self.fetcher.fetch(origin + "/robots.txt", max_bytes=ROBOTS_MAX_BYTES, deadline=deadline)
        except ToolFailure as exc:
            if exc.kind == "blocked":
                raise
            # Unreachable or too slow (a trickling robots.txt): nothing forbids the page. Remembered for
            # the origin, so a slow robots.txt costs its time once, not on every page of the site.
            return None
        if fetched.status >= 400:
            return None  # 4xx means "no rules"; 5xx we also treat as no rules rather than failing the page
        parser = RobotFileParser()
        parser.parse(fetched.body.decode("utf-8", errors="replace").splitlines())
        return parser

    async def allowed(self, url: str, *, deadline: float | None = None) -> bool:
        """Whether robots.txt lets us fetch `url`; loading it ends by `deadline` (event-loop time)."""
        parts = urlsplit(url)
        parser = await self._parser(f"{parts.scheme}://{parts.netloc}", deadline)
        return parser is None or parser.can_fetch(AGENT_TOKEN, url)
