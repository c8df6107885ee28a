"""An eval over a person's own documents: a folder of files (or a built index) as the eval's corpus.

The folder is read by the same ingestion as `deepresearch index` (md, txt, html, pdf, csv), so the eval measures
what a user's `ask --index` would read; each document's id is its path inside the folder ("notes/2024-03.md"), which
is how a questions file names its gold documents. The corpus is written as a corpus.jsonl into the eval's
directory, so a resumed eval checks it against the manifest like any other corpus.
"""

from __future__ import annotations

import json
from pathlib import Path

from deepresearch.evals.data.dataset import DatasetError, EvalQuestion

CORPUS_FILE = "corpus.jsonl"


def _write(rows: list[dict[str, str]], out_path: Path, what: str) -> Path:
    if not rows:
        raise DatasetError(f"{what}: no readable documents")
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return out_path


def corpus_from_folder(folder: Path, out_path: Path, *, max_file_bytes: int) -> tuple[Path, list[str]]:
    """Write the folder's documents as a corpus.jsonl; returns its path and the files that were skipped (why)."""
    from deepresearch.tools.index.ingest import Ingest, IngestError

    if not folder.is_dir():
        raise DatasetError(f"--docs {folder}: not a folder")
    try:
        ingest = Ingest(folder, max_file_bytes=max_file_bytes)
        prefix = f"{ingest.path.name}/"
        rows = [{"id": d.id.removeprefix(prefix), "title": d.title, "text": d.text} for d in ingest]
    except IngestError as exc:
        raise DatasetError(str(exc)) from None
    return _write(rows, out_path, f"--docs {folder}"), ingest.skipped


def corpus_from_index(index: object, name: str, out_path: Path) -> Path:
    """Write every document of a built local index (a LocalIndex) as a corpus.jsonl."""
    bm25 = index.bm25  # type: ignore[attr-defined]
    rows = [{"id": d.id, "title": d.title, "text": d.text}
            for d in (bm25.get(doc_id) for doc_id in bm25.all_ids()) if d is not None]
    return _write(rows, out_path, f"--index {name}")


def resolve_gold_ids(questions: list[EvalQuestion], corpus_ids: set[str]) -> list[EvalQuestion]:
    """Gold documents named by a shorter path than the corpus uses ("pump.md" for "notes/pump.md") take the one
    corpus id they end; an exact id, or a name that fits none or several, is left for check_gold_ids to judge."""
    def resolve(gold: str) -> str:
        if gold in corpus_ids:
            return gold
        fits = [i for i in corpus_ids if i.endswith("/" + gold)]
        return fits[0] if len(fits) == 1 else gold

    return [q.model_copy(update={"gold_doc_ids": [resolve(g) for g in q.gold_doc_ids]}) for q in questions]
