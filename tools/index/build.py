"""Index paths into a named index: the one entry point the CLI, benches and evals use."""

from __future__ import annotations

import time
from pathlib import Path

from deepresearch.tools.index.documents import SyncReport
from deepresearch.tools.index.ingest import Ingest, IngestError
from deepresearch.tools.index.registry import IndexRegistry
from pydantic import BaseModel


class PathReport(BaseModel):
    path: str
    report: SyncReport
    seconds: float


def index_paths(registry: IndexRegistry, name: str, paths: list[Path], *, vectors: bool = False) -> list[PathReport]:
    """Add or refresh each path (JSONL corpus, folder or file) in index `name`, creating it if needed.

    Re-running with the same paths only touches documents whose content changed and removes those
    that disappeared. Raises IngestError (one line) for a missing path or malformed corpus line, and when a
    new index would hold nothing (every file skipped, or none of a kind it reads): no empty index is made.
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
        if created and index.info().documents == 0:
            raise IngestError(_nothing_indexed(name, reports))
        index.bm25.optimize()
    except BaseException:
        # A failed first build leaves nothing behind: an empty index in `index --list` would look
        # like a real one. An existing index keeps what it had (each document commits on its own).
        if created:
            registry.remove(name)
        raise
    return reports


def _nothing_indexed(name: str, reports: list[PathReport]) -> str:
    paths = ", ".join(item.path for item in reports)
    skipped = [reason for item in reports for reason in item.report.skipped]
    if skipped:
        return f"nothing was indexed into {name!r}: every file was skipped ({len(skipped)}; first: {skipped[0]})"
    return f"nothing was indexed into {name!r}: no md, txt, html or pdf file in {paths}"
