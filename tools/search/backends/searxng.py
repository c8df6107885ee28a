"""SearxNG's JSON API (`/search?q=…&format=json`); also what the local web serves."""

from __future__ import annotations

import httpx
from deepresearch.tools.search.backends.base import SearchBackend, request_json, text_field
from deepresearch.tools.search.types import BackendFailure, SearchHit


class SearxngBackend(SearchBackend):
    name = "searxng"

    def __init__(self, base_url: str, client: httpx.AsyncClient):
        self.base_url = base_url.rstrip("/")
        self.client = client

    async def search(self, query: str, k: int) -> list[SearchHit]:
        body = await request_json(self.client, "GET", f"{self.base_url}/search", params={"q": query, "format": "json"})
        rows = body.get("results") if isinstance(body, dict) else None
        if not isinstance(rows, list):
            raise BackendFailure("bad_response", "no 'results' list in the SearxNG response")
        hits = []
        for row in rows[: k * 2]:
            if not isinstance(row, dict):
                continue
            doc_id = row.get("doc_id")  # the local web adds it; a real SearxNG does not
            hits.append(SearchHit(
                title=text_field(row, "title"), url=text_field(row, "url"), snippet=text_field(row, "content"),
                backend=self.name, rank=len(hits) + 1, doc_id=doc_id if isinstance(doc_id, str) else None,
            ))
        return hits
