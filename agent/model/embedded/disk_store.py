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
    """Delete all but the `limit` most recently written files matching `pattern`. Several writers (an eval's
    concurrent runs, other processes) prune the same directory, so a listed file may be gone by the time it
    is dated: it is skipped, not an error."""
    dated: list[tuple[int, Path]] = []
    for file in directory.glob(pattern):
        try:
            dated.append((file.stat().st_mtime_ns, file))
        except FileNotFoundError:
            continue
    dated.sort()
    for _, old in dated[:-limit]:
        old.unlink(missing_ok=True)
