"""Index paths into a named index: the one entry point the CLI, benches and evals use."""

from __future__ import annotations

import time
from pathlib import Path

from deepresearch.tools.index.documents import SyncReport
from deepresearch.tools.index.ingest import Ingest
from deepresearch.tools.index.registry import IndexRegistry
from pydantic import BaseModel


class PathReport(BaseModel):
    path: str
    report: SyncReport
    seconds: float


def index_paths(registry: IndexRegistry, name: str, paths: list[Path], *, vectors: bool = False) -> list[PathReport]:
    """Add or refresh each path (JSONL corpus, folder or file) in index `name`, creating it if needed.

    Re-running with the same paths only touches documents whose content changed and removes those
    that disappeared. Raises IngestError (one line) for a missing path or malformed corpus line.
    """
    ingests = [Ingest(path, max_file_bytes=registry.settings.index.max_file_bytes) for path in paths]
    created = not registry.exists(name)
    index = registry.open(name, create=True)
    try:
        if vectors or registry.settings.index.vectors:
            index.enable_vectors()
        reports: list[PathReport] = []
        for ingest in ingests:
            start = time.perf_counter()
            report = index.add(ingest, source=ingest.source)
            report.skipped.extend(ingest.skipped)
            reports.append(PathReport(path=ingest.source, report=report, seconds=time.perf_counter() - start))
        index.bm25.optimize()
    except BaseException:
        # A failed first build leaves nothing behind: an empty index in `index --list` would look
        # like a real one. An existing index keeps what it had (each document commits on its own).
        if created:
            registry.remove(name)
        raise
    return reports
