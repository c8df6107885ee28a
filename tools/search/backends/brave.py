"""Brave Search API (used only when an API key is set)."""

from __future__ import annotations

from deepresearch.tools.search.backends.base import KeyedApiBackend, request_json, text_field
from deepresearch.tools.search.types import BackendFailure, SearchHit


class BraveBackend(KeyedApiBackend):
    name = "brave"

    async def search(self, query: str, k: int) -> list[SearchHit]:
        body = await request_json(
            self.client, "GET", self.url, params={"q": query, "count": min(k, 20)},
            headers={"X-Subscription-Token": self.api_key, "Accept": "application/json"},
        )
        web = body.get("web") if isinstance(body, dict) else None
        if web is None and isinstance(body, dict):
            return []  # Brave omits the section when nothing matched
        rows = web.get("results") if isinstance(web, dict) else None
        if not isinstance(rows, list):
            raise BackendFailure("bad_response", "no 'web.results' list in the Brave response")
        return [
            SearchHit(
                title=text_field(row, "title"), url=text_field(row, "url"), snippet=text_field(row, "description"),
                backend=self.name, rank=i + 1,
            )
            for i, row in enumerate(r for r in rows if isinstance(r, dict))
        ]
