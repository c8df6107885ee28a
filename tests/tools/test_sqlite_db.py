"""The one way a SQLite file of ours is opened (tools/sqlite_db.py): several openers of one new store at once."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from deepresearch.tools.sqlite_db import connect


def test_the_switch_to_wal_waits_for_a_writer_instead_of_failing(tmp_path: Path):
    # Another connection writes to a store still in its first journal mode: SQLite answers the switch to WAL with
    # "database is locked" at once, without waiting (three processes first opening the demo index at once saw it).
    path = tmp_path / "store.sqlite"
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("CREATE TABLE t (x)")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO t VALUES (1)")
    done = threading.Timer(0.4, lambda: writer.execute("COMMIT"))
    done.start()
    start = time.monotonic()
    conn = connect(path, timeout_s=10)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert time.monotonic() - start >= 0.3  # it waited for the writer
    assert conn.execute("SELECT x FROM t").fetchall() == [(1,)]
    done.join()
    conn.close()
    writer.close()


def test_a_switch_still_locked_at_the_deadline_fails_with_sqlites_error(tmp_path: Path):
    path = tmp_path / "store.sqlite"
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("CREATE TABLE t (x)")
    writer.execute("BEGIN IMMEDIATE")
    start = time.monotonic()
    try:
        connect(path, timeout_s=0.3)
    except sqlite3.OperationalError as exc:
        assert "locked" in str(exc)
    else:
        raise AssertionError("the switch succeeded under a writer")
    assert 0.25 <= time.monotonic() - start < 5
    writer.execute("COMMIT")
    writer.close()


def test_the_checkpoint_store_opens_while_another_process_writes_it(tmp_path: Path):
    # Two servers first running in one data directory: LangGraph's setup switches the store to WAL, which failed
    # at once under the other's write (a run ended "error").
    import asyncio
    from contextlib import AsyncExitStack

    from deepresearch.agent.graph.run import _checkpointer

    path = tmp_path / "checkpoints.sqlite"
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("CREATE TABLE other (x)")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO other VALUES (1)")
    done = threading.Timer(0.4, lambda: writer.execute("COMMIT"))
    done.start()

    async def open_it() -> str:
        async with AsyncExitStack() as stack:
            saver = await _checkpointer(stack, path)
            async with saver.conn.execute("PRAGMA journal_mode") as cursor:
                return (await cursor.fetchone())[0]

    assert asyncio.run(open_it()) == "wal"
    done.join()
    writer.close()
