"""Telling a damaged trace store from a working one, and moving a damaged one out of the way.

A traces.db cut short (disk full, a copy interrupted) or overwritten is reported as TraceStoreCorrupt
with its path, never as a raw sqlite3 traceback; `move_aside` keeps the damaged file (and its WAL) for
recovery with `sqlite3 FILE .recover` and lets the next command start a fresh store.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

# Auxiliary files SQLite keeps beside a WAL-mode database; they belong to it and move with it.
COMPANIONS = ("-wal", "-shm", "-journal")


class TraceStoreCorrupt(RuntimeError):
    """The trace database is damaged; the message is one line naming the file and what is wrong."""

    def __init__(self, path: Path, reason: str):
        super().__init__(f"trace store {path} is damaged ({reason})")
        self.path = path
        self.reason = reason


def is_corruption(exc: sqlite3.DatabaseError) -> bool:
    """Damage rather than an ordinary error (a locked database, a failed constraint, a full disk)."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name:
        return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))
    return type(exc) is sqlite3.DatabaseError  # older sqlite3 modules: corruption is the bare class


def full_check(path: Path) -> str | None:
    """None when the database passes SQLite's integrity check, else the first problem (reads it all)."""
    if not path.exists():
        return None
    try:
        # Through SQLite alone: a plain open()/close() of the file would drop the POSIX locks that other
        # connections of this process hold on it (see tools.sqlite_db).
        conn = sqlite3.connect(path, timeout=30)
        try:
            rows = conn.execute("PRAGMA quick_check").fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        if is_corruption(exc):
            return str(exc)
        raise
    problems = [str(r[0]) for r in rows if r and r[0] != "ok"]
    return problems[0] if problems else None


def move_aside(path: Path) -> Path:
    """Rename the database and its companion files to `<name>.damaged-<time>`; returns the new path."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    path.rename(target)
    for suffix in COMPANIONS:
        companion = path.with_name(path.name + suffix)
        if companion.exists():
            companion.rename(target.with_name(target.name + suffix))
    return target
