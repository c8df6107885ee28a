"""Tavily's search API (used only when an API key is set)."""

from __future__ import annotations

from deepresearch.tools.search.backends.base import KeyedApiBackend, request_json, text_field
from deepresearch.tools.search.types import BackendFailure, SearchHit


class TavilyBackend(KeyedApiBackend):
    name = "tavily"

    async def search(self, query: str, k: int) -> list[SearchHit]:
        body = await request_json(
            self.client, "POST", self.url,
            json={"query": query, "max_results": k, "search_depth": "basic"},
            headers={"Authorization": f"Bearer {self.api_key}"},
        )
        rows = body.get("results") if isinstance(body, dict) else None
        if not isinstance(rows, list):
            raise BackendFailure("bad_response", "no 'results' list in the Tavily response")
        return [
            SearchHit(
                title=text_field(row, "title"), url=text_field(row, "url"), snippet=text_field(row, "content"),
                backend=self.name, rank=i + 1,
            )
            for i, row in enumerate(r for r in rows if isinstance(r, dict))
        ]
