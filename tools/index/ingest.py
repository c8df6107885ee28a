"""Where documents come from: a JSONL corpus (`id,title,text` per line), a folder of files, or one file."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

from deepresearch.tools.extract.files import SUPPORTED_SUFFIXES, UnreadableFile, read_user_file
from deepresearch.tools.index.documents import SourceDoc
from pydantic import ValidationError


class IngestError(ValueError):
    """A source cannot be indexed at all (missing path, malformed JSONL line); one line saying where."""


class Ingest:
    """Documents from one path, with the files it had to skip collected as it goes."""

    def __init__(self, path: Path, *, max_file_bytes: int):
        if not path.exists():
            raise IngestError(f"{path}: no such file or folder")
        self.path = path.resolve()
        self.max_file_bytes = max_file_bytes
        self.skipped: list[str] = []

    @property
    def source(self) -> str:
        """The key documents are filed under, so re-indexing this path replaces exactly its documents."""
        return str(self.path)

    def __iter__(self) -> Iterator[SourceDoc]:
        if self.path.is_dir():
            yield from self._folder()
        elif self.path.suffix.lower() == ".jsonl":
            yield from self._jsonl()
        else:
            doc = self._file(self.path, self.path.name)
            if doc is None:
                raise IngestError(self.skipped[-1])
            yield doc

    def _jsonl(self) -> Iterator[SourceDoc]:
        with self.path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    if not isinstance(row, dict):
                        raise ValueError("not a JSON object")
                    yield SourceDoc(
                        id=str(row["id"]), title=str(row.get("title") or ""), text=str(row["text"]),
                        url=row.get("url") if isinstance(row.get("url"), str) else None,
                    )
                except KeyError as exc:
                    raise IngestError(f"{self.path}:{number}: missing field {exc}") from None
                except (ValueError, ValidationError) as exc:
                    reason = str(exc).splitlines()[0]
                    raise IngestError(f"{self.path}:{number}: not a valid document line: {reason}") from None

    def _folder(self) -> Iterator[SourceDoc]:
        for path in sorted(self._folder_files()):
            if path.suffix.lower() not in SUPPORTED_SUFFIXES or not path.is_file():
                continue
            doc = self._file(path, f"{self.path.name}/{path.relative_to(self.path).as_posix()}")
            if doc is not None:
                yield doc

    def _folder_files(self) -> Iterator[Path]:
        """The folder's files, hidden ones left out. A symlink that leads outside the folder is skipped (a link
        to /etc/passwd or a private folder would be indexed, then served by `web serve`); linked folders are
        never entered, and a link inside the folder is read where it leads."""
        for folder, dirs, files in os.walk(self.path):  # followlinks=False
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for name in dirs:
                if os.path.islink(os.path.join(folder, name)):
                    self._outside(Path(folder, name))
            for name in files:
                path = Path(folder, name)
                if not name.startswith(".") and not self._outside(path):
                    yield path

    def _outside(self, path: Path) -> bool:
        """True (and the path skipped, saying why) when `path` is a link that leads out of the folder."""
        if not path.is_symlink():
            return False
        target = Path(os.path.realpath(path))
        if target.is_relative_to(self.path):
            return False
        self.skipped.append(f"{path}: a link to {target}, outside {self.path}: not followed "
                            "(index that path itself to include it)")
        return True

    def _file(self, path: Path, doc_id: str) -> SourceDoc | None:
        try:
            title, text = read_user_file(path, max_bytes=self.max_file_bytes)
        except (UnreadableFile, OSError) as exc:
            self.skipped.append(str(exc))
            return None
        except Exception as exc:  # any parser failure on one (possibly hostile) file must not abort a folder
            reason = " ".join(str(exc).split())
            self.skipped.append(f"{path}: could not be read ({type(exc).__name__}: {reason})")
            return None
        if not text.strip():
            self.skipped.append(f"{path}: no text")
            return None
        return SourceDoc(id=doc_id, title=title, text=text, url=path.as_uri())
