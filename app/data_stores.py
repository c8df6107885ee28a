"""Every SQLite store of the data dir, as `doctor` checks them and `runs repair` moves damaged ones aside.

The trace store first (runs and ratings), then the checkpoint store (`ask --resume`), the search cache, each
index (its BM25 file and its vectors' Chroma file) and the memory (Chroma). A damaged one is moved aside
whole, kept for recovery: a file with its WAL beside it, a Chroma-backed folder (memory, an index) as one
folder at the top of the data dir, since its other files belong to the damaged database.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from deepresearch.tools.index.store import DB_FILE
from deepresearch.tools.sqlite_health import damaged_name, full_check, move_aside

from .runtime import DEMO_INDEX
from .settings import Settings

CHROMA_FILE = "chroma.sqlite3"  # the database file Chroma keeps in its folder


@dataclass(frozen=True)
class DataStore:
    what: str  # how a message names it: "checkpoint store", "index 'mine'"
    path: Path  # its SQLite file
    folder: Path | None = None  # moved aside instead of the file: the folder the file belongs to
    aside: Path | None = None  # where that folder goes (plus `.damaged-<time>`)
    after: str = "the next command starts a new one"  # what moving it aside costs, said to the user

    def problem(self) -> str | None:
        """None when the file passes SQLite's integrity check (or does not exist), else the first problem."""
        return full_check(self.path)

    def move_aside(self) -> Path:
        """Rename the file (and its WAL) or its folder to `….damaged-<time>`; returns where it went."""
        if self.folder is None or self.aside is None:
            return move_aside(self.path)
        target = damaged_name(self.aside)
        self.folder.rename(target)
        return target


def data_stores(settings: Settings) -> list[DataStore]:
    """The stores that exist in the data dir; the trace store always, first (it is reported even before it exists)."""
    paths = settings.paths
    stores = [
        DataStore("trace store", paths.traces_db),
        DataStore("checkpoint store", paths.checkpoints_db,
                  after="runs interrupted before cannot be resumed; new runs start a new one"),
        DataStore("search cache", settings.tools.search_cache_path),
    ]
    if paths.indexes.is_dir():
        for folder in sorted(p for p in paths.indexes.iterdir() if p.is_dir()):
            name = folder.name
            after = "it is built again on its next use" if name == DEMO_INDEX else \
                f"build it again with: deepresearch index PATH --name {name}"
            aside = paths.data_dir / f"index-{name}"  # out of indexes/, where it would still be listed
            stores += [DataStore(f"index '{name}'", folder / DB_FILE, folder, aside, after),
                       DataStore(f"index '{name}' (vectors)", folder / "chroma" / CHROMA_FILE, folder, aside, after)]
    stores.append(DataStore("memory", paths.memory / CHROMA_FILE, paths.memory, paths.memory,
                            "new memories go to a new one"))
    return [s for i, s in enumerate(stores) if i == 0 or s.path.is_file()]
