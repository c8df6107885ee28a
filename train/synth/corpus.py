"""The documents questions are synthesized from, and the search that checks a question can be answered.

Documents come from a local index (`--index NAME`), a corpus file (`--corpus FILE`), a folder of files (`--corpus
DIR`, read as `deepresearch index` reads it) or the sources logged runs read (runs.py). Search is the local
index's own BM25 (tools/index/store.py): the named index itself, or, for a file, a folder or logged sources, a
throwaway index of the documents built in a temporary folder, so "the search finds the source in its top k" means
what the agent's local search would return.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from deepresearch.agent.reader import Unit, read_units

if TYPE_CHECKING:
    from deepresearch.tools.index.local_index import LocalIndex


@dataclass(frozen=True)
class SynthDoc:
    id: str
    title: str
    text: str

    def units(self) -> list[Unit]:
        return read_units(self.text)


class SynthCorpus:
    """Documents by id (in a stable order) and a BM25 search over them. `close()` removes a throwaway index."""

    def __init__(self, docs: Iterable[SynthDoc], index: LocalIndex | None = None,
                 on_close: Callable[[], None] | None = None):
        self.docs: dict[str, SynthDoc] = {}
        self._on_close = on_close
        for doc in docs:
            if doc.text.strip() and doc.id not in self.docs:
                self.docs[doc.id] = doc
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.index = index if index is not None else self._throwaway_index()

    def _throwaway_index(self) -> LocalIndex:
        from deepresearch.tools.config import ToolSettings
        from deepresearch.tools.index.documents import SourceDoc
        from deepresearch.tools.index.local_index import LocalIndex

        self._tmp = tempfile.TemporaryDirectory(prefix="synth-index-")
        tools = ToolSettings()
        index = LocalIndex("synth", Path(self._tmp.name), tools.index, tools.embedding, create=True)
        index.add((SourceDoc(id=d.id, title=d.title, text=d.text) for d in self.docs.values()), source="synth")
        return index

    @classmethod
    def from_index(cls, index: LocalIndex, on_close: Callable[[], None] | None = None) -> SynthCorpus:
        """Every document of a named index; its own search (BM25 and, when it has them, vectors). `on_close`: what
        closes the index (its registry), called by `close()`."""
        docs = (doc for doc in (index.get(i) for i in index.bm25.all_ids()) if doc is not None)
        return cls((SynthDoc(d.id, d.title, d.text) for d in docs), index=index, on_close=on_close)

    @classmethod
    def from_path(cls, path: Path, max_file_bytes: int = 20_000_000) -> SynthCorpus:
        """A corpus file (jsonl: id, title, text) or a folder of files (md, txt, html, pdf, csv …)."""
        from deepresearch.tools.index.ingest import Ingest

        return cls(SynthDoc(d.id, d.title, d.text) for d in Ingest(path, max_file_bytes=max_file_bytes))

    def __len__(self) -> int:
        return len(self.docs)

    def __iter__(self) -> Iterator[SynthDoc]:
        return iter(self.docs.values())

    def get(self, doc_id: str) -> SynthDoc | None:
        return self.docs.get(doc_id)

    def search(self, query: str, k: int) -> list[str]:
        """The ids of the top k documents for `query` (the local search's ranking)."""
        return [hit.doc_id for hit in self.index.search(query, k)]

    def fingerprint(self) -> str:
        """A hash of every document's id, title and text: the same corpus synthesizes the same questions."""
        digest = hashlib.sha256()
        for doc in self.docs.values():
            digest.update(json.dumps([doc.id, doc.title, doc.text]).encode())
        return digest.hexdigest()[:16]

    def write_jsonl(self, path: Path, leave_out: Iterable[str] = ()) -> int:
        """The corpus as a jsonl file (what the local web serves in training and the gate), less `leave_out`."""
        skip = set(leave_out)
        path.parent.mkdir(parents=True, exist_ok=True)
        written = 0
        with path.open("w", encoding="utf-8") as out:
            for doc in self.docs.values():
                if doc.id not in skip:
                    out.write(json.dumps({"id": doc.id, "title": doc.title, "text": doc.text}, ensure_ascii=False)
                              + "\n")
                    written += 1
        return written

    def close(self) -> None:
        if self._on_close is not None:
            self._on_close()
            self._on_close = None
        if self._tmp is not None:
            self.index.close()
            self._tmp.cleanup()
            self._tmp = None
