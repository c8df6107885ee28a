"""The checkpoint store (`ask --resume`) shared by several processes on one data dir, as `serve`, the TUI and
`ask` share it: all start on a fresh file at once, every run finishes, and the file is intact and in WAL."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from deepresearch.agent.trace.store import TraceStore

PROCESSES, RUNS = 3, 3


def test_processes_checkpointing_into_one_fresh_store(tmp_path: Path):
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    children = [subprocess.Popen([sys.executable, "-m", "tests.agent.checkpoint_child", str(tmp_path), str(RUNS)],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 cwd=Path(__file__).resolve().parents[2]) for _ in range(PROCESSES)]
    results = [(child.wait(timeout=600), child.communicate()[1]) for child in children]
    assert all(code == 0 for code, _ in results), [err[-2000:] for _, err in results]
    store = TraceStore(tmp_path / "traces.db")
    runs = store.list_runs(limit=None)
    store.close()
    assert len(runs) == PROCESSES * RUNS and {r.status for r in runs} == {"finished"}
    conn = sqlite3.connect(tmp_path / "checkpoints.db")
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        threads = {row[0] for row in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    finally:
        conn.close()
    assert threads == {r.id for r in runs}  # every run's checkpoints, under its own id
