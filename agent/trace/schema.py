"""Trace store schema and its migrations (applied by tools.sqlite_db.migrate; `PRAGMA user_version` counts them)."""

from __future__ import annotations

# Each entry moves the schema from version i to i + 1. Append only; never edit a shipped step.
MIGRATIONS: list[str] = [
    # 1: runs and their append-only events
    """
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        question TEXT NOT NULL,
        settings TEXT NOT NULL,          -- JSON: the settings the run used
        tags TEXT NOT NULL DEFAULT '{}', -- JSON: e.g. {"eval_id": ..., "train_round": ...}
        status TEXT NOT NULL DEFAULT 'running',
        created_at REAL NOT NULL,
        finished_at REAL,
        answer TEXT,
        report TEXT,
        citations TEXT NOT NULL DEFAULT '[]',
        usage TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX runs_created ON runs(created_at);
    CREATE TABLE events (
        run_id TEXT NOT NULL REFERENCES runs(id),
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL,              -- llm | tool | plan | finding | budget | error | final | feedback | ...
        ts REAL NOT NULL,
        payload TEXT NOT NULL,           -- JSON
        PRIMARY KEY (run_id, seq)
    );
    CREATE INDEX events_kind ON events(kind);
    """,
    # 2: feedback as its own table (a run can be rated more than once, long after it finished)
    """
    CREATE TABLE feedback (
        run_id TEXT NOT NULL REFERENCES runs(id),
        ts REAL NOT NULL,
        score REAL NOT NULL,
        comment TEXT
    );
    CREATE INDEX feedback_run ON feedback(run_id);
    CREATE INDEX feedback_ts ON feedback(ts);
    """,
    # 3: which graph task logged an event, and the resume that superseded it (that task ran again after a
    # kill, so its earlier events would otherwise be counted twice by the trainer and the evals)
    """
    ALTER TABLE events ADD COLUMN task TEXT;
    ALTER TABLE events ADD COLUMN superseded_by INTEGER;
    CREATE INDEX events_task ON events(run_id, task);
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)

