"""Findings kept across runs in a Chroma collection on disk, embedded with the offline MiniLM."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

from deepresearch.tools.chroma import open_collection
from deepresearch.tools.embedding import Embedder
from pydantic import BaseModel


class Memory(BaseModel):
    id: str
    text: str
    source: str
    score: float
    created_at: float


class MemoryStore:
    def __init__(self, directory: Path, embedder: Embedder, collection: str = "memory"):
        self.embedder = embedder
        self._collection = open_collection(directory, collection)
        self._lock = threading.Lock()

    @staticmethod
    def memory_id(text: str, source: str) -> str:
        return hashlib.sha256(f"{source}\0{' '.join(text.split())}".encode()).hexdigest()[:24]

    def remember(self, text: str, source: str) -> tuple[str, bool]:
        """Store a finding; (id, False) if the same text from the same source is already stored."""
        memory_id = self.memory_id(text, source)
        with self._lock:
            if self._collection.get(ids=[memory_id], include=[])["ids"]:
                return memory_id, False
            self._collection.add(
                ids=[memory_id], embeddings=self.embedder.embed([text]), documents=[text],
                metadatas=[{"source": source, "created_at": time.time()}],
            )
        return memory_id, True

    def recall(self, query: str, k: int) -> list[Memory]:
        with self._lock:
            count = self._collection.count()
            if count == 0:
                return []
            found = self._collection.query(
                query_embeddings=self.embedder.embed([query]), n_results=min(k, count),
                include=["documents", "metadatas", "distances"],
            )
        return [
            Memory(
                id=memory_id, text=text, source=str(meta.get("source", "")), score=1.0 - distance,
                created_at=float(meta.get("created_at", 0.0)),
            )
            for memory_id, text, meta, distance in zip(
                found["ids"][0], found["documents"][0], found["metadatas"][0], found["distances"][0], strict=True
            )
        ]

    def count(self) -> int:
        with self._lock:
            return self._collection.count()
