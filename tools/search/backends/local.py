"""The local index as a search backend: hits carry local:// URLs and document ids."""

from __future__ import annotations

import asyncio

from deepresearch.tools.index.fusion import reciprocal_rank_fusion
from deepresearch.tools.index.local_index import LocalIndex
from deepresearch.tools.local_urls import local_url
from deepresearch.tools.search.backends.base import SearchBackend
from deepresearch.tools.search.types import SearchHit


class LocalBackend(SearchBackend):
    name = "local"
    cacheable = False  # an index changes when re-indexed, and searching it is cheaper than the cache

    def __init__(self, indexes: list[LocalIndex]):
        self.indexes = indexes

    def _search_sync(self, query: str, k: int) -> list[SearchHit]:
        per_index = {index.name: index.search(query, k) for index in self.indexes}
        if len(per_index) == 1:
            ranked = next(iter(per_index.values()))
        else:  # several indexes: scores are not comparable across them, ranks are
            by_key = {(h.index, h.doc_id): h for hits in per_index.values() for h in hits}
            fused = reciprocal_rank_fusion([[f"{h.index}\0{h.doc_id}" for h in hits] for hits in per_index.values()])
            ranked = [by_key[tuple(key.split("\0", 1))] for key, _ in fused[:k]]
        return [
            SearchHit(
                title=h.title, url=local_url(h.index, h.doc_id), snippet=h.snippet, backend=self.name,
                rank=i + 1, doc_id=h.doc_id,
            )
            for i, h in enumerate(ranked)
        ]

    async def search(self, query: str, k: int) -> list[SearchHit]:
        return await asyncio.to_thread(self._search_sync, query, k)
