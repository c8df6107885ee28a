"""Export runs (with all their events) to JSONL, Parquet or CSV, and read JSONL/Parquet back.

JSONL and Parquet hold everything (Parquet with typed nested columns: parquet.py). CSV is the
spreadsheet view: one flat row per run, no events.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from .records import RunExport
from .store import TraceStore

__all__ = ["CSV_COLUMNS", "collect", "csv_row", "read_jsonl", "read_parquet", "write_csv", "write_jsonl",
           "write_parquet"]


# Where a writer writes: a path, or a binary file already open for writing (the app's safe output file).
Target = Path | BinaryIO


def write_parquet(runs: list[RunExport], path: Target) -> int:
    from .parquet import write_parquet as write  # pyarrow loads only when a Parquet file is written

    return write(runs, path)


@contextmanager
def _text(target: Target, newline: str | None = None) -> Iterator[TextIO]:
    if isinstance(target, str | Path):
        with Path(target).open("w", encoding="utf-8", newline=newline) as fh:
            yield fh
        return
    fh = io.TextIOWrapper(target, encoding="utf-8", newline=newline)
    try:
        yield fh
    finally:
        fh.flush()
        fh.detach()  # the caller owns the binary file


def read_parquet(path: Path) -> list[RunExport]:
    from .parquet import read_parquet as read

    return read(path)


def collect(store: TraceStore, run_ids: Iterable[str]) -> list[RunExport]:
    out = []
    for rid in run_ids:
        rec = store.get_run(rid)
        out.append(RunExport(**rec.model_dump(), events=store.events(rec.id)))
    return out


def write_jsonl(runs: list[RunExport], path: Target) -> int:
    with _text(path) as fh:
        for run in runs:
            fh.write(run.model_dump_json() + "\n")
    return len(runs)


def read_jsonl(path: Path) -> list[RunExport]:
    with Path(path).open(encoding="utf-8") as fh:
        return [RunExport.model_validate_json(line) for line in fh if line.strip()]


CSV_COLUMNS = ("id", "created_at", "finished_at", "duration_s", "status", "question", "answer", "model", "adapter",
               "llm_tokens", "llm_calls", "tool_calls", "wall_s", "citations", "verified_citations", "sources",
               "feedback_count", "feedback_mean", "events")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(text: str | None) -> str:
    """Untrusted text (questions, answers, web titles) as a cell no spreadsheet will run as a formula."""
    text = text or ""
    return "'" + text if text.startswith(_FORMULA_START) else text


def csv_row(run: RunExport) -> dict[str, Any]:
    verified = [c for c in run.citations if c.get("verified")]
    scores = [float(f["score"]) for f in run.feedback if f.get("score") is not None]
    model = run.settings.get("model") if isinstance(run.settings.get("model"), dict) else {}
    adapter = model.get("adapter") or run.settings.get("adapter")
    return {
        "id": run.id, "created_at": run.created_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else "",
        "duration_s": f"{run.duration_s:.2f}" if run.duration_s is not None else "",
        "status": run.status, "question": _cell(run.question), "answer": _cell(run.answer),
        "model": _cell(str(model.get("name") or "")), "adapter": _cell(str(adapter) if adapter else ""),
        **{k: run.usage.get(k, "") for k in ("llm_tokens", "llm_calls", "tool_calls", "wall_s")},
        "citations": len(run.citations), "verified_citations": len(verified),
        "sources": _cell(" ".join(dict.fromkeys(str(c.get("source", "")) for c in verified))),
        "feedback_count": len(scores), "feedback_mean": f"{sum(scores) / len(scores):.3f}" if scores else "",
        "events": len(run.events),
    }


def write_csv(runs: list[RunExport], path: Target) -> int:
    with _text(path, newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for run in runs:
            writer.writerow(csv_row(run))
    return len(runs)
