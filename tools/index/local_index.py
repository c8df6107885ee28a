"""A named local index: BM25 (FTS5) always, Chroma vectors optionally, fused by reciprocal rank."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path

from deepresearch.tools.config import EmbeddingSettings, IndexSettings
from deepresearch.tools.index.documents import IndexHit, SourceDoc, StoredDoc, SyncReport
from deepresearch.tools.index.fusion import reciprocal_rank_fusion
from deepresearch.tools.index.store import BM25Store
from deepresearch.tools.index.vectors import VectorStore
from pydantic import BaseModel


class IndexInfo(BaseModel):
    name: str
    path: str
    documents: int
    vectors: bool
    sources: dict[str, int]
    updated_at: float | None = None


class LocalIndex:
    def __init__(
        self, name: str, directory: Path, settings: IndexSettings, embedding: EmbeddingSettings,
        *, create: bool = False,
    ):
        self.name = name
        self.directory = directory
        self.settings = settings
        self.embedding = embedding
        self.bm25 = BM25Store(directory, create=create)
        self._vectors: VectorStore | None = None
        self._vector_lock = threading.Lock()

    @property
    def has_vectors(self) -> bool:
        return bool(self.bm25.get_meta("vectors", False))

    def _vector_store(self) -> VectorStore:
        with self._vector_lock:
            if self._vectors is None:
                from deepresearch.tools.embedding import Embedder

                embedder = Embedder(
                    self.embedding.model_dir, max_chars=self.embedding.max_chars, batch_size=self.settings.embed_batch
                )
                self._vectors = VectorStore(self.directory, embedder)
            return self._vectors

    # --- writing --------------------------------------------------------------------------------

    def add(self, docs: Iterable[SourceDoc], source: str, *, prune: bool = True) -> SyncReport:
        report, changed, removed = self.bm25.sync(docs, source, prune=prune)
        if self.has_vectors:
            vectors = self._vector_store()
            vectors.delete(removed)
            vectors.upsert(changed)
        return report

    def enable_vectors(self) -> int:
        """Embed every document (used when vectors are switched on for an existing index)."""
        if self.has_vectors:
            return 0
        vectors = self._vector_store()
        ids = self.bm25.all_ids()
        for start in range(0, len(ids), 512):
            docs = [d for d in (self.bm25.get(i) for i in ids[start : start + 512]) if d is not None]
            vectors.upsert(docs)
        self.bm25.set_meta("vectors", True)
        return len(ids)

    # --- reading --------------------------------------------------------------------------------

    def search(self, query: str, k: int) -> list[IndexHit]:
        if not self.has_vectors:
            return self._lexical(query, k)
        pool = max(k, self.settings.vector_candidates)
        lexical = self._lexical(query, pool)
        semantic = self._vector_store().search(query, pool)
        fused = reciprocal_rank_fusion(
            [[h.doc_id for h in lexical], [doc_id for doc_id, _ in semantic]], k=self.settings.rrf_k
        )[:k]
        by_id = {h.doc_id: h for h in lexical}
        heads = self.bm25.titles([doc_id for doc_id, _ in fused if doc_id not in by_id])
        hits: list[IndexHit] = []
        for rank, (doc_id, score) in enumerate(fused, 1):
            if doc_id in by_id:
                title, snippet = by_id[doc_id].title, by_id[doc_id].snippet
            elif doc_id in heads:
                title, snippet = heads[doc_id]
            else:  # the vector side knows a document the BM25 side has dropped; skip it
                continue
            hits.append(IndexHit(doc_id=doc_id, title=title, snippet=snippet, score=score, rank=rank, index=self.name))
        return hits

    def _lexical(self, query: str, k: int) -> list[IndexHit]:
        return self.bm25.search(
            query, k, index_name=self.name, snippet_tokens=self.settings.snippet_tokens,
            max_df_fraction=self.settings.max_df_fraction,
        )

    def get(self, doc_id: str) -> StoredDoc | None:
        return self.bm25.get(doc_id)

    def info(self) -> IndexInfo:
        updated = self.bm25.get_meta("updated_at")
        return IndexInfo(
            name=self.name, path=str(self.directory), documents=self.bm25.count(), vectors=self.has_vectors,
            sources=self.bm25.sources(), updated_at=float(updated) if updated is not None else None,
        )

    def close(self) -> None:
        self.bm25.close()
