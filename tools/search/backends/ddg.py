"""DuckDuckGo (and friends) through the `ddgs` package, which is synchronous: run it in a thread."""

from __future__ import annotations

import asyncio

from deepresearch.tools.search.backends.base import SearchBackend, text_field
from deepresearch.tools.search.types import BackendFailure, SearchHit


class DdgBackend(SearchBackend):
    name = "ddg"

    def __init__(self, timeout_s: float, engine: str = "auto"):
        self.timeout_s = timeout_s
        self.engine = engine

    def _search_sync(self, query: str, k: int) -> list[dict]:
        from ddgs import DDGS
        from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

        try:
            return DDGS(timeout=max(1, int(self.timeout_s))).text(query, max_results=k, backend=self.engine)
        except RatelimitException as exc:
            raise BackendFailure("rate_limited", str(exc) or "rate limited") from None
        except TimeoutException as exc:
            raise BackendFailure("timeout", str(exc) or "timed out") from None
        except DDGSException as exc:
            if "no results" in str(exc).lower():
                return []
            raise BackendFailure("network", str(exc).splitlines()[0] if str(exc) else "ddgs failed") from None

    async def search(self, query: str, k: int) -> list[SearchHit]:
        rows = await asyncio.wait_for(asyncio.to_thread(self._search_sync, query, k), self.timeout_s + 5)
        return [
            SearchHit(
                title=text_field(row, "title"), url=text_field(row, "href", "url"), snippet=text_field(row, "body"),
                backend=self.name, rank=i + 1,
            )
            for i, row in enumerate(r for r in rows if isinstance(r, dict))
        ]
