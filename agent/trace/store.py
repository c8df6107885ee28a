"""Append-only, crash-safe log of every run: SQLite in WAL mode, one commit per event.

A `kill -9` mid-run loses at most the event being written: every `log_*` call commits before
it returns. Readers (the CLI, the trainer, evals) may open the same file concurrently.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from deepresearch.tools import sqlite_db
from deepresearch.tools.base import ToolOutcome

from .health import TraceStoreCorrupt, is_corruption
from .records import LLMCall, RunRecord, TraceEvent
from .redact import redact_secrets
from .schema import MIGRATIONS


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _dt(ts: float | None) -> datetime | None:
    return datetime.fromtimestamp(ts, tz=UTC) if ts is not None else None


class RunNotFound(KeyError):
    def __init__(self, run_id: str):
        super().__init__(run_id)
        self.run_id = run_id

    def __str__(self) -> str:
        return f"no run with id '{self.run_id}'"


class TraceStore:
    """Raises TraceStoreCorrupt (one line, with the path) when the database file is damaged: at open
    for a bad header or schema, or later when a read or write runs into a damaged page."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        # Never open() this file outside SQLite: closing that descriptor would drop SQLite's locks (sqlite_db).
        try:
            self._conn = sqlite_db.connect(self.path)  # autocommit: each statement is its own durable transaction
        except sqlite3.DatabaseError as exc:
            if is_corruption(exc):
                raise TraceStoreCorrupt(self.path, str(exc)) from None
            raise
        try:
            with self._db() as db:
                db.execute("PRAGMA foreign_keys=ON")
                sqlite_db.migrate(db, MIGRATIONS, name=str(self.path))  # reads the schema: a truncated file fails here
        except BaseException:
            self._conn.close()
            raise

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        """The connection, under the lock; damage found while using it becomes TraceStoreCorrupt."""
        with self._lock:
            try:
                yield self._conn
            except sqlite3.DatabaseError as exc:
                if is_corruption(exc):
                    raise TraceStoreCorrupt(self.path, str(exc)) from None
                raise

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # --- writing --------------------------------------------------------------------------
    def start_run(
        self, question: str, settings: dict[str, Any], tags: dict[str, Any] | None = None,
        run_id: str | None = None,
    ) -> str:
        run_id = run_id or uuid.uuid4().hex[:12]
        with self._db() as db:
            db.execute(
                "INSERT INTO runs (id, question, settings, tags, created_at) VALUES (?, ?, ?, ?, ?)",
                (run_id, question, _dumps(redact_secrets(settings)), _dumps(tags or {}), time.time()),
            )
        return run_id

    def log_event(self, run_id: str, kind: str, payload: dict[str, Any], task: str | None = None) -> int:
        """Append one event and commit it; returns its sequence number within the run. `task` is the graph
        task that logged it (what `supersede` goes by when that task runs again after a resume)."""
        with self._db() as db:
            return self._insert(db, run_id, kind, payload, task)

    @staticmethod
    def _insert(db: sqlite3.Connection, run_id: str, kind: str, payload: dict[str, Any], task: str | None) -> int:
        # The INSERT ... SELECT picks the next seq atomically inside one statement.
        cur = db.execute(
            "INSERT INTO events (run_id, seq, kind, ts, payload, task) "
            "SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ? FROM events WHERE run_id = ? "
            "RETURNING seq",
            (run_id, kind, time.time(), _dumps(payload), task, run_id),
        )
        return int(cur.fetchone()[0])

    def supersede(self, run_id: str, tasks: list[str]) -> int:
        """Mark a resume: log a `resumed` event and set aside every earlier event of `tasks`, the graph tasks
        that were cut short and will run again from their start. The events stay in the file
        (`events(..., superseded=True)`); readers see each call once. Returns how many were set aside."""
        marks = ",".join("?" * len(tasks))
        with self._db() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                where = f"run_id = ? AND superseded_by IS NULL AND task IN ({marks})"
                count = db.execute(f"SELECT COUNT(*) FROM events WHERE {where}", (run_id, *tasks)).fetchone()[0]
                seq = self._insert(db, run_id, "resumed", {"tasks": tasks, "superseded": count}, None)
                db.execute(f"UPDATE events SET superseded_by = ? WHERE {where} AND seq < ?", (seq, run_id, *tasks, seq))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return int(count)

    def log_llm_call(self, run_id: str, call: LLMCall, task: str | None = None) -> int:
        payload = call.completion.model_dump(mode="json")
        payload.update(role=call.role, messages=call.messages, prompt_version=call.prompt_version, step=call.step)
        if call.schema is not None:  # the grammar the completion was drawn under: the trainer replays its masks
            payload["schema"] = call.schema
        if call.sampling is not None:  # what the logprobs were sampled under (temperature 0 = greedy), and the seed
            payload["temperature"] = call.sampling.temperature
            if call.sampling.seed is not None:
                payload["seed"] = call.sampling.seed
        return self.log_event(run_id, "llm", payload, task)

    def log_tool_call(self, run_id: str, outcome: ToolOutcome, step: str | None = None,
                      task: str | None = None) -> int:
        payload = outcome.model_dump(mode="json")
        payload["step"] = step
        return self.log_event(run_id, "tool", payload, task)

    def finish_run(
        self, run_id: str, status: str, answer: str | None, report: str | None,
        citations: list[dict[str, Any]], usage: dict[str, Any],
    ) -> None:
        with self._db() as db:
            cur = db.execute(
                "UPDATE runs SET status=?, finished_at=?, answer=?, report=?, citations=?, usage=? WHERE id=?",
                (status, time.time(), answer, report, _dumps(citations), _dumps(usage), run_id),
            )
        if cur.rowcount == 0:
            raise RunNotFound(run_id)
        self.log_event(run_id, "final", {"status": status, "answer": answer, "citations": citations})

    def add_feedback(self, run_id: str, score: float, comment: str | None = None) -> None:
        self._require(run_id)
        with self._db() as db:
            db.execute(
                "INSERT INTO feedback (run_id, ts, score, comment) VALUES (?, ?, ?, ?)",
                (run_id, time.time(), float(score), comment),
            )
        self.log_event(run_id, "feedback", {"score": score, "comment": comment})

    def set_status(self, run_id: str, status: str) -> None:
        with self._db() as db:
            db.execute("UPDATE runs SET status=? WHERE id=?", (status, run_id))

    # --- reading --------------------------------------------------------------------------
    def _require(self, run_id: str) -> None:
        with self._db() as db:
            if db.execute("SELECT 1 FROM runs WHERE id=?", (run_id,)).fetchone() is None:
                raise RunNotFound(run_id)

    def _record(self, row: tuple) -> RunRecord:
        (rid, question, settings, tags, status, created, finished, answer, report, citations, usage) = row
        with self._db() as db:
            fb = db.execute(
                "SELECT ts, score, comment FROM feedback WHERE run_id=? ORDER BY ts", (rid,)
            ).fetchall()
        return RunRecord(
            id=rid, question=question, status=status, created_at=_dt(created), finished_at=_dt(finished),
            settings=redact_secrets(json.loads(settings)), tags=json.loads(tags), answer=answer, report=report,
            citations=json.loads(citations), usage=json.loads(usage),
            feedback=[{"ts": ts, "score": s, "comment": c} for ts, s, c in fb],
        )

    _COLUMNS = "id, question, settings, tags, status, created_at, finished_at, answer, report, citations, usage"

    def get_run(self, run_id: str) -> RunRecord:
        with self._db() as db:
            row = db.execute(f"SELECT {self._COLUMNS} FROM runs WHERE id=?", (run_id,)).fetchone()
        if row is None:
            if not run_id:
                raise RunNotFound(run_id)
            # Let a unique prefix stand for the id, as `git` does. A literal comparison, not LIKE: in a
            # pattern '%' and '_' are wildcards, so `runs show %` would pick a run.
            with self._db() as db:
                rows = db.execute(
                    f"SELECT {self._COLUMNS} FROM runs WHERE substr(id, 1, ?) = ? LIMIT 2", (len(run_id), run_id)
                ).fetchall()
            if len(rows) != 1:
                raise RunNotFound(run_id)
            row = rows[0]
        return self._record(row)

    def list_runs(
        self, limit: int | None = 100, since: datetime | None = None, tags: dict[str, Any] | None = None,
        status: str | None = None,
    ) -> list[RunRecord]:
        sql, args = f"SELECT {self._COLUMNS} FROM runs WHERE 1=1", []
        if since is not None:
            sql += " AND created_at >= ?"
            args.append(since.timestamp())
        if status is not None:
            sql += " AND status = ?"
            args.append(status)
        for key, value in (tags or {}).items():
            sql += " AND json_extract(tags, ?) = ?"
            args += [f"$.{key}", value]
        sql += " ORDER BY created_at DESC"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        with self._db() as db:
            rows = db.execute(sql, args).fetchall()
        return [self._record(r) for r in rows]

    def events(self, run_id: str, kind: str | None = None, superseded: bool = False) -> list[TraceEvent]:
        return list(self.iter_events(run_id, kind, superseded))

    def iter_events(self, run_id: str, kind: str | None = None, superseded: bool = False) -> Iterator[TraceEvent]:
        """The run's events in order; without `superseded`, not those a resume set aside (see `supersede`)."""
        sql, args = "SELECT seq, kind, ts, payload FROM events WHERE run_id=?", [run_id]
        if not superseded:
            sql += " AND superseded_by IS NULL"
        if kind:
            sql += " AND kind=?"
            args.append(kind)
        with self._db() as db:
            rows = db.execute(sql + " ORDER BY seq", args).fetchall()
        for seq, k, ts, payload in rows:
            yield TraceEvent(seq=seq, kind=k, ts=ts, payload=json.loads(payload))

    def feedback_since(self, since: datetime) -> list[tuple[str, float, str | None]]:
        with self._db() as db:
            return db.execute(
                "SELECT run_id, score, comment FROM feedback WHERE ts >= ? ORDER BY ts", (since.timestamp(),)
            ).fetchall()
