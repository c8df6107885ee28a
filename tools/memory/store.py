"""Findings kept across runs in a Chroma collection on disk, embedded with the offline MiniLM.

Listing, showing and forgetting memories need no embeddings: a store opened without an embedder
(`deepresearch memory …`) does all of that and refuses only `remember` / `recall`.
"""

from __future__ import annotations

import hashlib
import string
import threading
import time
from pathlib import Path
from typing import Any

from deepresearch.tools.chroma import open_collection
from deepresearch.tools.embedding import Embedder
from pydantic import BaseModel

ID_CHARS = 24  # hex digits of a memory id


class MemoryNotFound(LookupError):
    """No memory (or more than one) matches the id or id prefix given."""


class Memory(BaseModel):
    id: str
    text: str
    source: str
    score: float | None = None  # similarity to the query (recall only)
    created_at: float


def _memory(memory_id: str, text: str | None, meta: dict[str, Any] | None, score: float | None = None) -> Memory:
    meta = meta or {}
    return Memory(id=memory_id, text=text or "", source=str(meta.get("source", "")), score=score,
                  created_at=float(meta.get("created_at", 0.0)))


class MemoryStore:
    def __init__(self, directory: Path, embedder: Embedder | None, collection: str = "memory"):
        self.embedder = embedder
        self._collection = open_collection(directory, collection)
        self._lock = threading.Lock()

    @staticmethod
    def memory_id(text: str, source: str) -> str:
        return hashlib.sha256(f"{source}\0{' '.join(text.split())}".encode()).hexdigest()[:ID_CHARS]

    def _embed(self, text: str) -> list[list[float]]:
        if self.embedder is None:
            raise RuntimeError("this memory store was opened without an embedder (list/show/forget only)")
        return self.embedder.embed([text])

    def remember(self, text: str, source: str, run_id: str = "") -> tuple[str, bool]:
        """Store a finding (`run_id`: the run that found it, so a rating can take it back); (id, False) if the same
        text from the same source is already stored."""
        memory_id = self.memory_id(text, source)
        with self._lock:
            if self._collection.get(ids=[memory_id], include=[])["ids"]:
                return memory_id, False
            self._collection.add(
                ids=[memory_id], embeddings=self._embed(text), documents=[text],
                metadatas=[{"source": source, "created_at": time.time(), "run_id": run_id}],
            )
        return memory_id, True

    def recall(self, query: str, k: int) -> list[Memory]:
        with self._lock:
            count = self._collection.count()
            if count == 0:
                return []
            found = self._collection.query(
                query_embeddings=self._embed(query), n_results=min(k, count),
                include=["documents", "metadatas", "distances"],
            )
        return [
            _memory(memory_id, text, meta, score=1.0 - distance)
            for memory_id, text, meta, distance in zip(
                found["ids"][0], found["documents"][0], found["metadatas"][0], found["distances"][0], strict=True
            )
        ]

    def count(self) -> int:
        with self._lock:
            return self._collection.count()

    # --- inspecting and forgetting ----------------------------------------------------------

    def entries(self) -> list[Memory]:
        """Every memory, newest first."""
        with self._lock:
            found = self._collection.get(include=["documents", "metadatas"])
        memories = [_memory(i, t, m) for i, t, m in zip(found["ids"], found["documents"], found["metadatas"],
                                                         strict=True)]
        return sorted(memories, key=lambda m: (-m.created_at, m.id))

    def resolve(self, key: str) -> str:
        """The full id of the one memory whose id is `key` or starts with it (as git resolves commits)."""
        key = key.strip().lower()
        if not key or any(c not in string.hexdigits for c in key) or len(key) > ID_CHARS:
            raise MemoryNotFound(f"'{key}' is not a memory id (hex digits, as `deepresearch memory list` shows)")
        with self._lock:
            ids = self._collection.get(include=[])["ids"]
        matches = [i for i in ids if i.startswith(key)]
        if not matches:
            raise MemoryNotFound(f"no memory with id '{key}'")
        if len(matches) > 1:
            raise MemoryNotFound(f"id prefix '{key}' matches {len(matches)} memories; give more of the id")
        return matches[0]

    def get(self, key: str) -> Memory:
        memory_id = self.resolve(key)
        with self._lock:
            found = self._collection.get(ids=[memory_id], include=["documents", "metadatas"])
        if not found["ids"]:
            raise MemoryNotFound(f"no memory with id '{key}'")
        return _memory(found["ids"][0], found["documents"][0], found["metadatas"][0])

    def forget(self, keys: list[str]) -> list[str]:
        """Delete the memories named by id or prefix; all are resolved first, so a bad one deletes nothing."""
        ids = list(dict.fromkeys(self.resolve(k) for k in keys))
        if ids:
            with self._lock:
                self._collection.delete(ids=ids)
        return ids

    def forget_run(self, run_id: str) -> int:
        """Delete what one run remembered (a run rated as wrong must not come back as a note); returns how many."""
        with self._lock:
            ids = self._collection.get(where={"run_id": run_id}, include=[])["ids"] if run_id else []
            if ids:
                self._collection.delete(ids=ids)
        return len(ids)

    def clear(self) -> int:
        """Delete every memory; returns how many there were."""
        with self._lock:
            ids = self._collection.get(include=[])["ids"]
            if ids:
                self._collection.delete(ids=ids)
        return len(ids)
