"""Files the engine keeps for the next process (prefix keys/values, compiled grammars): written whole or
not at all, and only the newest few kept."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def replace_atomically(path: Path, write: Callable[[str], None]) -> None:
    """`write(tmp)` fills a temporary file beside `path`, which then replaces `path`: readers see a whole
    file or none. Raises OSError as the write does."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)  # left only when the write failed


def keep_newest(directory: Path, pattern: str, limit: int) -> None:
    """Delete all but the `limit` most recently written files matching `pattern`."""
    files = sorted(directory.glob(pattern), key=lambda f: f.stat().st_mtime_ns)
    for old in files[:-limit]:
        old.unlink(missing_ok=True)
