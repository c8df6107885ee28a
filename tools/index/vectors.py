"""The optional vector side of an index: document embeddings in a Chroma collection."""

from __future__ import annotations

from pathlib import Path

from deepresearch.tools.chroma import open_collection
from deepresearch.tools.embedding import Embedder
from deepresearch.tools.index.documents import StoredDoc

COLLECTION = "documents"


class VectorStore:
    def __init__(self, directory: Path, embedder: Embedder):
        self.embedder = embedder
        self._collection = open_collection(directory / "chroma", COLLECTION)

    def upsert(self, docs: list[StoredDoc], batch: int = 256) -> None:
        for start in range(0, len(docs), batch):
            part = docs[start : start + batch]
            self._collection.upsert(
                ids=[d.id for d in part],
                embeddings=self.embedder.embed([f"{d.title}\n{d.text}" for d in part]),
                metadatas=[{"title": d.title[:500]} for d in part],
            )

    def delete(self, doc_ids: list[str]) -> None:
        if doc_ids:
            self._collection.delete(ids=doc_ids)

    def count(self) -> int:
        return self._collection.count()

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """(doc_id, cosine similarity) best first."""
        if k <= 0 or self.count() == 0:
            return []
        found = self._collection.query(
            query_embeddings=self.embedder.embed([query]), n_results=min(k, self.count()), include=["distances"]
        )
        return [(doc_id, 1.0 - dist) for doc_id, dist in zip(found["ids"][0], found["distances"][0], strict=True)]
