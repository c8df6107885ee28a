"""The one way a command writes an output file (`ask --out`, `runs show --out`, `runs export`, `eval compare
--out`, the TUI's save): never replacing what is not a plain file, never following a planted file.

- A regular file (or a new name) gets a whole new file or none: the data goes to a temporary file created
  exclusively beside the target (O_EXCL | O_NOFOLLOW, a random name: a symlink planted under any name is
  never followed) and is then renamed over it. A symlink to a regular file keeps pointing there: the file
  it names is replaced, not the link.
- Anything else that exists (a device such as /dev/null or /dev/full, a FIFO, a terminal) is written in
  place, as a shell's `>` would: renaming a file over /dev/full would turn the device into a plain file.
  So are the names of this process's own streams (/dev/stdout, /dev/fd/N), appended to, so that
  `--out /dev/stdout > r.md` and `>> log` both keep what the shell set up.
"""

from __future__ import annotations

import os
import re
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, TypeVar

T = TypeVar("T")

# Names of an already open descriptor of this process: writing means writing to that descriptor's file.
_STREAM_NAME = re.compile(r"^/(dev/(stdout|stderr|fd/\d+)|proc/(self|thread-self|\d+)/fd/\d+)$")
_DIRECT_FLAGS = os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def write_output(path: Path, content: bytes | Callable[[BinaryIO], T]) -> T | None:
    """Write `content` (bytes, or a function that writes to a binary file and returns a result) to `path`.
    Raises OSError (with the path as its filename) when the target cannot be written; nothing is left
    behind then but what a device or FIFO already took."""
    write = content if callable(content) else _bytes_writer(content)
    try:
        return _write(path, write)
    except OSError as exc:
        if exc.errno is None or exc.filename == str(path):
            raise
        # Named by the path the user gave (not a temporary name, or no name at all as a full disk has).
        raise OSError(exc.errno, exc.strerror, str(path)) from None


def _write(path: Path, write: Callable[[BinaryIO], T]) -> T | None:
    if _STREAM_NAME.match(os.path.abspath(path)):
        return _write_in_place(path, write, os.O_APPEND)
    try:
        found = os.stat(path)  # follows symlinks: what the name ends at
    except FileNotFoundError:
        found = None
    if found is not None and stat.S_ISDIR(found.st_mode):
        raise IsADirectoryError(21, "Is a directory", str(path))
    if found is not None and not stat.S_ISREG(found.st_mode):
        return _write_in_place(path, write, 0)
    target = Path(os.path.realpath(path)) if found is not None else path
    return _replace(target, write, stat.S_IMODE(found.st_mode) if found is not None else None)


def _bytes_writer(data: bytes) -> Callable[[BinaryIO], None]:
    def write(fh: BinaryIO) -> None:
        fh.write(data)

    return write


def _write_in_place(path: Path, write: Callable[[BinaryIO], T], extra_flags: int) -> T:
    fd = os.open(path, _DIRECT_FLAGS | extra_flags)  # no O_CREAT: the thing exists; no O_TRUNC: not ours to cut
    with os.fdopen(fd, "wb") as fh:
        result = write(fh)
        fh.flush()
    return result


def _replace(target: Path, write: Callable[[BinaryIO], T], mode: int | None) -> T:
    while True:
        temp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.partial")
        try:
            fd = os.open(temp, _NEW_FLAGS, 0o666)  # the umask applies, as for any new file
            break
        except FileExistsError:
            continue  # a name someone else holds (or planted): draw another
    try:
        with os.fdopen(fd, "wb") as fh:
            if mode is not None:
                os.fchmod(fh.fileno(), mode)  # a replaced file keeps its permissions
            result = write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return result
