"""One persistent BM25 index in a SQLite file, scored by SQLite's FTS5 engine.

Documents live in a plain table (so a document's full text comes back by id, which the citation
checker needs); an external-content FTS5 table indexes title and text. Each document keeps a content
hash and the source it came from, so re-indexing a source only touches what changed and removes what
disappeared from it.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from deepresearch.tools import sqlite_db
from deepresearch.tools.index.documents import IndexHit, SourceDoc, StoredDoc, SyncReport
from deepresearch.tools.index.query import fts_or_expression, name_phrases, query_terms

DB_FILE = "bm25.sqlite"
# Titles name the entity a paragraph is about; weighting them up helps entity-centric questions.
TITLE_WEIGHT, TEXT_WEIGHT = 2.0, 1.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs(
    rowid INTEGER PRIMARY KEY,
    doc_id TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    text TEXT NOT NULL,
    url TEXT,
    source TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS docs_source ON docs(source);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    title, text, content='docs', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class IndexNotFound(LookupError):
    """The index file is missing or unreadable."""


class BM25Store:
    def __init__(self, directory: Path, *, create: bool = False):
        self.directory = directory
        path = directory / DB_FILE
        if not path.is_file() and not create:
            raise IndexNotFound(f"no index at {directory}")
        # One connection shared by threads (the local web serves from a thread pool); a lock serialises use.
        self._db = sqlite_db.connect(path)
        self._lock = threading.Lock()
        self._df_cache: dict[str, int] = {}
        self._count_cache: int | None = None
        with self._lock:
            try:
                sqlite_db.migrate(self._db, [_SCHEMA], name=str(path))  # idempotent: indexes made before v1 pass
            except BaseException:
                self._db.close()
                raise

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # --- metadata -------------------------------------------------------------------------------

    def get_meta(self, key: str, default: object = None) -> object:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def set_meta(self, key: str, value: object) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)", (key, json.dumps(value)))

    # --- writing --------------------------------------------------------------------------------

    def sync(
        self, docs: Iterable[SourceDoc], source: str, *, prune: bool = True
    ) -> tuple[SyncReport, list[StoredDoc], list[str]]:
        """Bring the documents of `source` in line with `docs`.

        Returns the report, the documents that were added or changed (for the vector side) and the ids
        that were removed. With `prune`, documents of this source that are no longer given are removed.
        """
        report = SyncReport()
        changed: list[StoredDoc] = []
        with self._lock:
            cur = self._db.cursor()
            # IMMEDIATE: what is already indexed is read under the write lock, so two processes syncing the same
            # source (two first uses of the demo index) run one after the other instead of both inserting.
            cur.execute("BEGIN IMMEDIATE")
            try:
                existing = {
                    doc_id: (rowid, digest, src)
                    for rowid, doc_id, digest, src in cur.execute("SELECT rowid, doc_id, hash, source FROM docs")
                }
                seen: set[str] = set()
                for doc in docs:
                    if doc.id in seen:
                        report.skipped.append(f"{doc.id}: duplicate id in {source}")
                        continue
                    seen.add(doc.id)
                    digest = doc.content_hash
                    old = existing.get(doc.id)
                    if old is not None and old[1] == digest and old[2] == source:
                        report.unchanged += 1
                        continue
                    if old is not None:
                        self._delete_row(cur, old[0])
                        report.updated += 1
                    else:
                        report.added += 1
                    cur.execute(
                        "INSERT INTO docs(doc_id, title, text, url, source, hash) VALUES(?,?,?,?,?,?)",
                        (doc.id, doc.title, doc.text, doc.url, source, digest),
                    )
                    cur.execute(
                        "INSERT INTO fts(rowid, title, text) VALUES(?,?,?)", (cur.lastrowid, doc.title, doc.text)
                    )
                    changed.append(StoredDoc(
                        id=doc.id, title=doc.title, text=doc.text, url=doc.url, source=source, content_hash=digest,
                    ))
                removed: list[str] = []
                if prune:
                    for doc_id, (rowid, _digest, src) in existing.items():
                        if src == source and doc_id not in seen:
                            self._delete_row(cur, rowid)
                            removed.append(doc_id)
                report.removed = len(removed)
                cur.execute("COMMIT")
                self._df_cache.clear()
                self._count_cache = None
            except BaseException:
                cur.execute("ROLLBACK")
                raise
        self.set_meta("updated_at", time.time())
        return report, changed, removed

    @staticmethod
    def _delete_row(cur: sqlite3.Cursor, rowid: int) -> None:
        title, text = cur.execute("SELECT title, text FROM docs WHERE rowid=?", (rowid,)).fetchone()
        # External-content FTS5 tables need the old values to remove a row's terms.
        cur.execute("INSERT INTO fts(fts, rowid, title, text) VALUES('delete', ?, ?, ?)", (rowid, title, text))
        cur.execute("DELETE FROM docs WHERE rowid=?", (rowid,))

    def optimize(self) -> None:
        with self._lock:
            self._db.execute("INSERT INTO fts(fts) VALUES('optimize')")

    # --- reading --------------------------------------------------------------------------------

    def _document_frequency(self, term: str) -> int:
        cached = self._df_cache.get(term)
        if cached is None:
            cached = self._db.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (f'"{term}"',)).fetchone()[0]
            if len(self._df_cache) > 50_000:
                self._df_cache.clear()
            self._df_cache[term] = cached
        return cached

    def _match_expression(self, query: str, max_df_fraction: float) -> str | None:
        """OR of the query's useful terms. Terms found in more than `max_df_fraction` of documents are
        dropped while rarer ones remain: their IDF is near zero, so they barely move BM25, yet they
        make FTS5 score thousands of extra rows (this is what keeps p50 in single milliseconds)."""
        terms = query_terms(query)
        if not terms:
            return None
        total = self._doc_count()
        frequencies = {term: self._document_frequency(term) for term in terms}
        present = [t for t in terms if frequencies[t] > 0]
        rare = [t for t in present if frequencies[t] <= max_df_fraction * total]
        return fts_or_expression(rare or present or terms, name_phrases(query))

    def _doc_count(self) -> int:
        if self._count_cache is None:
            self._count_cache = self._db.execute("SELECT count(*) FROM docs").fetchone()[0]
        return self._count_cache

    def search(
        self, query: str, k: int, *, index_name: str, snippet_tokens: int = 32, max_df_fraction: float = 1.0
    ) -> list[IndexHit]:
        if k <= 0:
            return []
        with self._lock:
            expr = self._match_expression(query, max_df_fraction)
        if expr is None:
            return []
        # Two steps: rank rowids alone (an explicit bm25() call; a configured `rank` function is slower),
        # then snippets and ids for just the top k. Joining docs inside the ranking query reads every
        # matched row's full text before the sort and costs about twice as much.
        with self._lock:
            top = self._db.execute(
                f"SELECT rowid, bm25(fts, {TITLE_WEIGHT}, {TEXT_WEIGHT}) AS s FROM fts WHERE fts MATCH ? "
                "ORDER BY s LIMIT ?", (expr, k),
            ).fetchall()
            if not top:
                return []
            rowids = [rowid for rowid, _ in top]
            marks = ",".join("?" * len(rowids))
            snippets = dict(self._db.execute(
                f"SELECT rowid, snippet(fts, 1, '', '', '…', ?) FROM fts WHERE fts MATCH ? AND rowid IN ({marks})",
                (snippet_tokens, expr, *rowids),
            ).fetchall())
            names = {
                rowid: (doc_id, title)
                for rowid, doc_id, title in self._db.execute(
                    f"SELECT rowid, doc_id, title FROM docs WHERE rowid IN ({marks})", rowids
                )
            }
        # FTS5's bm25() is negative (smaller = better); report the positive score.
        return [
            IndexHit(
                doc_id=names[rowid][0], title=names[rowid][1], snippet=snippets.get(rowid, ""), score=-score,
                rank=i + 1, index=index_name,
            )
            for i, (rowid, score) in enumerate(top)
        ]

    def get(self, doc_id: str) -> StoredDoc | None:
        with self._lock:
            row = self._db.execute(
                "SELECT doc_id, title, text, url, source, hash FROM docs WHERE doc_id=?", (doc_id,)
            ).fetchone()
        if row is None:
            return None
        return StoredDoc(id=row[0], title=row[1], text=row[2], url=row[3], source=row[4], content_hash=row[5])

    def titles(self, doc_ids: list[str]) -> dict[str, tuple[str, str]]:
        """doc_id → (title, first characters of text), for hits that come from the vector side."""
        if not doc_ids:
            return {}
        marks = ",".join("?" * len(doc_ids))
        with self._lock:
            rows = self._db.execute(
                f"SELECT doc_id, title, substr(text, 1, 240) FROM docs WHERE doc_id IN ({marks})", doc_ids
            ).fetchall()
        return {doc_id: (title, head) for doc_id, title, head in rows}

    def all_ids(self) -> list[str]:
        with self._lock:
            return [row[0] for row in self._db.execute("SELECT doc_id FROM docs ORDER BY rowid")]

    def count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT count(*) FROM docs").fetchone()[0]

    def sources(self) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute("SELECT source, count(*) FROM docs GROUP BY source").fetchall()
        return dict(rows)
