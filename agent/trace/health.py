"""Telling a damaged trace store from a working one (tools.sqlite_health, as for every store of the data dir).

A traces.db cut short or overwritten is reported as TraceStoreCorrupt with its path, never as a raw sqlite3
traceback; `move_aside` keeps it for recovery and lets the next command start a fresh store.
"""

from __future__ import annotations

from pathlib import Path

from deepresearch.tools.sqlite_health import COMPANIONS, StoreDamaged, full_check, is_corruption, move_aside

__all__ = ["COMPANIONS", "TraceStoreCorrupt", "full_check", "is_corruption", "move_aside"]


class TraceStoreCorrupt(StoreDamaged):
    """The trace database is damaged; the message is one line naming the file and what is wrong."""

    def __init__(self, path: Path, reason: str):
        super().__init__("trace store", path, reason)
