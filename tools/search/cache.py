"""A small on-disk cache of search results (SQLite), keyed by backend, query and result count."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from deepresearch.tools import sqlite_db
from deepresearch.tools.search.types import SearchHit


class SearchCache:
    def __init__(self, path: Path, *, ttl_s: float, max_entries: int):
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._db = sqlite_db.connect(path)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS hits(backend TEXT, query TEXT, k INTEGER, stored REAL, hits TEXT,"
                " PRIMARY KEY(backend, query, k))"
            )

    @staticmethod
    def _key(query: str) -> str:
        return " ".join(query.lower().split())

    def get(self, backend: str, query: str, k: int) -> list[SearchHit] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT hits, stored FROM hits WHERE backend=? AND query=? AND k=?", (backend, self._key(query), k)
            ).fetchone()
        if row is None or time.time() - row[1] > self.ttl_s:
            return None
        return [SearchHit.model_validate(h) for h in json.loads(row[0])]

    def put(self, backend: str, query: str, k: int, hits: list[SearchHit]) -> None:
        payload = json.dumps([h.model_dump(mode="json") for h in hits])
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO hits VALUES(?,?,?,?,?)", (backend, self._key(query), k, time.time(), payload)
            )
            # Keep the cache small: drop the oldest rows beyond the cap.
            self._db.execute(
                "DELETE FROM hits WHERE rowid IN (SELECT rowid FROM hits ORDER BY stored DESC LIMIT -1 OFFSET ?)",
                (self.max_entries,),
            )

    def close(self) -> None:
        with self._lock:
            self._db.close()
