"""Named indexes under data_dir/indexes/NAME: create, open (cached), list."""

from __future__ import annotations

import re
import shutil
import threading

from deepresearch.tools.config import ToolSettings
from deepresearch.tools.index.local_index import IndexInfo, LocalIndex
from deepresearch.tools.index.store import DB_FILE, IndexNotFound

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def validate_index_name(name: str) -> str:
    if not _NAME.match(name):
        raise ValueError(
            f"bad index name {name!r}: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return name


class IndexRegistry:
    def __init__(self, settings: ToolSettings):
        self.settings = settings
        self.root = settings.indexes_dir
        self._open: dict[str, LocalIndex] = {}
        self._lock = threading.Lock()

    def names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if (p / DB_FILE).is_file())

    def exists(self, name: str) -> bool:
        return _NAME.match(name) is not None and (self.root / name / DB_FILE).is_file()

    def open(self, name: str, *, create: bool = False) -> LocalIndex:
        validate_index_name(name)
        with self._lock:
            if name not in self._open:
                if not create and not self.exists(name):
                    known = ", ".join(self.names()) or "none yet; build one with `deepresearch index PATH --name NAME`"
                    raise IndexNotFound(f"no index named {name!r} (indexes: {known})")
                self._open[name] = LocalIndex(
                    name, self.root / name, self.settings.index, self.settings.embedding, create=create
                )
            return self._open[name]

    def remove(self, name: str) -> None:
        """Close and delete index `name` (its whole folder); a missing index is not an error."""
        validate_index_name(name)
        with self._lock:
            index = self._open.pop(name, None)
            if index is not None:
                index.close()
            shutil.rmtree(self.root / name, ignore_errors=True)

    def list(self) -> list[IndexInfo]:
        return [self.open(name).info() for name in self.names()]

    def close(self) -> None:
        with self._lock:
            for index in self._open.values():
                index.close()
            self._open.clear()
