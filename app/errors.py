"""The CLI's one error boundary: known failures become one line and an exit code, never a traceback.

Exit 2: bad input or settings (a config file that is not UTF-8, a data dir that is a file). Exit 1:
infrastructure (a damaged store, a disk that refuses writes). Anything else is a bug and keeps
its traceback.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path
from typing import Any

import click
from typer.core import TyperGroup

from .console import fail
from .settings_sources import SettingsError

REPAIR_HINT = "move it aside with `deepresearch runs repair` (the next command starts a new one)"
# OS errors that say the machine, not the input, is at fault.
_INFRASTRUCTURE = {errno.ENOSPC, errno.EROFS, errno.EIO, errno.EDQUOT, errno.EMFILE, errno.ENFILE}
# Commands that read or write the data dir; `doctor` reports a bad one itself, others never touch it.
DATA_COMMANDS = frozenset({"ask", "tui", "runs", "index", "web", "train", "eval", "adapters", "memory", "serve",
                           "mcp"})


class DataDirError(SettingsError):
    """The data dir cannot hold data: not a directory, not writable, not creatable."""


def check_data_dir(path: Path) -> None:
    """The data dir exists as a writable directory, or can be created: the nearest existing ancestor is
    a writable directory. Creates nothing (a command that only reads should not leave folders behind)."""
    where = "--data-dir / DEEPRESEARCH_DATA_DIR"
    try:
        probe = Path(os.path.abspath(path))
        while not probe.exists() and not probe.is_symlink() and probe != probe.parent:
            probe = probe.parent
        is_dir, writable = probe.is_dir(), os.access(probe, os.W_OK | os.X_OK)
    except (ValueError, OSError) as exc:  # e.g. an embedded NUL byte, a path too long
        raise DataDirError(f"data dir {path!r} is not a usable path ({exc}); set {where}") from None
    if not is_dir:
        raise DataDirError(f"data dir {path}: {probe} is not a directory; set {where} to a folder")
    if not writable:
        raise DataDirError(f"data dir {path}: {probe} is not writable; set {where} to a folder you can write")


def describe(exc: BaseException) -> tuple[str, int] | None:
    """(one-line message, exit code) for a known failure; None for a bug."""
    from deepresearch.tools.sqlite_health import StoreDamaged, is_corruption

    if isinstance(exc, SettingsError):
        return str(exc), 2
    if isinstance(exc, StoreDamaged):
        return f"{exc}; {REPAIR_HINT}", 1
    if isinstance(exc, sqlite3.DatabaseError):
        damaged = damaged_store() if is_corruption(exc) else None
        return (f"{damaged}; {REPAIR_HINT}" if damaged else f"database error: {exc}"), 1
    if isinstance(exc, OSError) and exc.strerror:
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror}", 1 if exc.errno in _INFRASTRUCTURE else 2
    return None


def damaged_store() -> str | None:
    """Which store of the data dir is damaged, for a damage error that does not say (a store other than the
    trace store, opened by a library): "search cache /d/cache/search.sqlite is damaged (…)"."""
    from .data_stores import data_stores
    from .settings import get_settings

    try:
        for store in data_stores(get_settings()):
            if (problem := store.problem()) is not None:
                return f"{store.what} {store.path} is damaged ({problem})"
    except Exception:  # looking for the culprit must not hide the error itself
        return None
    return None


class ErrorBoundary(TyperGroup):
    """The root command group: every command's known failures pass through `describe`."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort, KeyboardInterrupt):
            raise
        except Exception as exc:
            known = describe(exc)
            if known is None:
                raise
            raise fail(*known) from None


def preflight(settings: Any, command: str | None) -> None:
    """Start-up checks for commands that keep data: the data dir must be usable (exit 2 otherwise)."""
    if command in DATA_COMMANDS:
        check_data_dir(settings.data_dir)
