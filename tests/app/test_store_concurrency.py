"""Many processes and threads on one data dir never damage a store (real processes, real SQLite files).

The failure these pin down: a header check with Python's open()/close() beside a live connection dropped
SQLite's POSIX locks (Linux drops all of a process's locks on a file when any descriptor of it closes), so a
short-lived reader in another process checkpointed and deleted the WAL under a writer: traces.db lost.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from deepresearch.agent.trace.store import TraceStore
from deepresearch.app.runtime import demo_file

from .helpers import clean_env

# A short-lived reader, as `deepresearch runs list` is: open, list, close, again.
READER = """
import sys
from deepresearch.agent.trace.store import TraceStore
for _ in range(int(sys.argv[2])):
    store = TraceStore(sys.argv[1])
    store.list_runs(limit=20)
    store.close()
"""

# A writer, as a run is: one store open for its whole life, one commit per event.
WRITER = """
import sys
from deepresearch.agent.trace.store import TraceStore
store = TraceStore(sys.argv[1])
for i in range(int(sys.argv[2])):
    run = store.start_run(f"child question {i}", {})
    for j in range(5):
        store.log_event(run, "llm", {"n": j, "text": "x" * 3000})
    store.finish_run(run, status="done", answer="a", report="r", citations=[], usage={})
store.close()
"""


def _spawn(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(script), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _integrity(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


def test_readers_and_writers_in_other_processes_while_this_one_reopens(tmp_path: Path):
    db = tmp_path / "traces.db"
    held = TraceStore(db)  # like the TUI: one store open for the session ...
    children = [_spawn(READER, str(db), "150") for _ in range(3)] + [_spawn(WRITER, str(db), "30") for _ in range(2)]
    ours = []
    while any(child.poll() is None for child in children) or len(ours) < 40:
        run = held.start_run("parent question", {})
        held.log_event(run, "llm", {"text": "y" * 3000})
        ours.append(run)
        TraceStore(db).close()  # ... and a new one per command (plan review, `runs show`)
    for child in children:
        _, err = child.communicate(timeout=120)
        assert child.returncode == 0, err[-2000:]
    assert len(held.list_runs(limit=10_000)) == len(ours) + 2 * 30
    held.close()
    assert _integrity(db) == "ok"


def test_many_processes_create_one_new_store_at_once(tmp_path: Path):
    db = tmp_path / "fresh" / "traces.db"
    start = time.time() + 1.5  # every child waits for the same moment, then opens the new file
    script = f"""
import sys, time
time.sleep(max(0.0, {start} - time.time()))
from deepresearch.agent.trace.store import TraceStore
store = TraceStore(sys.argv[1]); store.start_run("q", {{}}); store.close()
"""
    children = [_spawn(script, str(db)) for _ in range(6)]
    for child in children:
        _, err = child.communicate(timeout=120)
        assert child.returncode == 0, err[-2000:]
    store = TraceStore(db)
    assert len(store.list_runs(limit=100)) == 6
    store.close()
    assert _integrity(db) == "ok"


def test_two_first_uses_of_the_demo_index_at_once(tmp_path: Path):
    start = time.time() + 2.0
    script = f"""
import time
from deepresearch.app.settings import Settings
from deepresearch.app.runtime import ensure_index
settings = Settings()
time.sleep(max(0.0, {start} - time.time()))
ensure_index(settings, "demo")
"""
    children = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, env=clean_env(tmp_path)) for _ in range(3)]
    for child in children:
        _, err = child.communicate(timeout=300)
        assert child.returncode == 0, err[-2000:]
    conn = sqlite3.connect(tmp_path / "data" / "indexes" / "demo" / "bm25.sqlite")
    try:
        count = conn.execute("SELECT count(*) FROM docs").fetchone()[0]
    finally:
        conn.close()
    shipped = sum(1 for line in demo_file("corpus.jsonl").read_text(encoding="utf-8").splitlines() if line.strip())
    assert count == shipped

