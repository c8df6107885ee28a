"""Telling a damaged SQLite store from a working one, and moving a damaged one out of the way.

Every store of the data dir (traces, checkpoints, search cache, indexes, memory) is checked the same way: a
file cut short (disk full, a copy interrupted) or overwritten is reported as StoreDamaged naming the store
and its path, never as a raw sqlite3 error; `move_aside` keeps the damaged file (and its WAL) for
recovery with `sqlite3 FILE .recover`, so that the next command starts a fresh one.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

# Auxiliary files SQLite keeps beside a WAL-mode database; they belong to it and move with it.
COMPANIONS = ("-wal", "-shm", "-journal")


class StoreDamaged(RuntimeError):
    """A store's database file is damaged; the message is one line naming the store, the file and the damage."""

    def __init__(self, what: str, path: Path, reason: str):
        super().__init__(f"{what} {path} is damaged ({reason})")
        self.what = what
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


def damaged_name(path: Path) -> Path:
    """Where `move_aside` puts `path`: `<name>.damaged-<time>` beside it."""
    return path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")


def move_aside(path: Path) -> Path:
    """Rename the database and its companion files to `<name>.damaged-<time>`; returns the new path."""
    target = damaged_name(path)
    path.rename(target)
    for suffix in COMPANIONS:
        companion = path.with_name(path.name + suffix)
        if companion.exists():
            companion.rename(target.with_name(target.name + suffix))
    return target
