"""The one way a SQLite file of ours is opened: safe for any number of processes and threads on it.

Why one function: on Linux, closing *any* descriptor of a file drops every POSIX lock the process holds
on it, SQLite's included. A header check with `open()`/`close()` beside a live connection therefore
lets another process write into pages this one is still reading or writing, and the file is lost (it
happened to traces.db under the TUI and `serve`). So nothing but SQLite ever opens these files; WAL is
switched on once (asking first, so a store that already uses it is not locked for it); and a schema is
created or migrated inside one IMMEDIATE transaction that re-reads the version under the write lock,
so two processes creating the same new store cannot both build it.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

# Long enough for another process's checkpoint or migration; a writer holds the lock for milliseconds.
BUSY_TIMEOUT_S = 30.0


class SchemaTooNew(RuntimeError):
    def __init__(self, path: str, found: int, known: int):
        super().__init__(f"{path} has schema v{found}, newer than this deepresearch knows (v{known}); upgrade it")


def connect(path: Path, *, timeout_s: float = BUSY_TIMEOUT_S) -> sqlite3.Connection:
    """An autocommit connection in WAL mode, usable from any thread (callers serialise their own use)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=timeout_s)
    try:
        _use_wal(conn, timeout_s)
        conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL survives process kills
    except BaseException:
        conn.close()
        raise
    return conn


def _use_wal(conn: sqlite3.Connection, timeout_s: float) -> None:
    """Switch the file to WAL unless it uses it. The switch needs the file alone for a moment, and SQLite answers
    "database is locked" at once, without its busy wait, while another connection writes (three processes opening
    one new store at once: one of them failed). So a locked switch is retried until `timeout_s`; a file system that
    cannot do WAL keeps its journal mode, as before."""
    deadline = time.monotonic() + timeout_s
    while str(conn.execute("PRAGMA journal_mode").fetchall()[0][0]).lower() != "wal":
        try:
            conn.execute("PRAGMA journal_mode=WAL").fetchall()
            return
        except sqlite3.OperationalError as exc:
            time.sleep(_wal_retry_pause(exc, deadline))


async def use_wal_async(conn: Any, timeout_s: float = BUSY_TIMEOUT_S) -> None:
    """`_use_wal` on an aiosqlite connection (LangGraph's checkpoint store: two servers first running in one data
    directory at once)."""
    deadline = time.monotonic() + timeout_s
    while await _journal_mode(conn) != "wal":
        try:
            await (await conn.execute("PRAGMA journal_mode=WAL")).close()
            return
        except sqlite3.OperationalError as exc:
            await asyncio.sleep(_wal_retry_pause(exc, deadline))


async def _journal_mode(conn: Any) -> str:
    async with conn.execute("PRAGMA journal_mode") as cursor:
        return str((await cursor.fetchone())[0]).lower()


def _wal_retry_pause(exc: sqlite3.OperationalError, deadline: float) -> float:
    """How long to wait before switching to WAL again; the error itself when it is no lock or the deadline passed."""
    if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() >= deadline:
        raise exc
    return random.uniform(0.01, 0.05)  # apart from the others waiting for it


def statements(script: str) -> Iterator[str]:
    """The statements of an SQL script, one at a time (executescript would commit our transaction)."""
    pending = ""
    for part in script.split(";"):
        pending += part + ";"
        if sqlite3.complete_statement(pending):
            if _has_code(pending):
                yield pending
            pending = ""
    if _has_code(pending):
        raise ValueError(f"incomplete SQL statement: {pending.strip()[:80]!r}")


def _has_code(sql: str) -> bool:
    return any(line.split("--", 1)[0].strip(" ;\t") for line in sql.splitlines())


def migrate(conn: sqlite3.Connection, steps: Sequence[str], *, name: str = "database") -> int:
    """Apply the steps `PRAGMA user_version` has not counted yet, under one write lock; returns the version.

    Step i moves the schema from version i to i + 1. Two processes may call this at once on a new file:
    the second waits for the first's transaction and then finds nothing left to do."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == len(steps):
        return version  # the common case costs one read and no lock
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > len(steps):
            raise SchemaTooNew(name, version, len(steps))
        for target in range(version + 1, len(steps) + 1):
            for sql in statements(steps[target - 1]):
                conn.execute(sql)
            conn.execute(f"PRAGMA user_version = {target}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return len(steps)
