"""Export runs (with all their events) to JSONL or Parquet, and read them back."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from .records import RunExport
from .store import TraceStore


def collect(store: TraceStore, run_ids: Iterable[str]) -> list[RunExport]:
    out = []
    for rid in run_ids:
        rec = store.get_run(rid)
        out.append(RunExport(**rec.model_dump(), events=store.events(rec.id)))
    return out


def write_jsonl(runs: list[RunExport], path: Path) -> int:
    with Path(path).open("w", encoding="utf-8") as fh:
        for run in runs:
            fh.write(run.model_dump_json() + "\n")
    return len(runs)


def read_jsonl(path: Path) -> list[RunExport]:
    with Path(path).open(encoding="utf-8") as fh:
        return [RunExport.model_validate_json(line) for line in fh if line.strip()]


# Parquet: one row per run; nested JSON values are kept as JSON strings so any reader
# (pandas, DuckDB, Spark) can load the file without our schema.
_JSON_COLUMNS = ("settings", "tags", "citations", "usage", "feedback", "events")


def write_parquet(runs: list[RunExport], path: Path) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = []
    for run in runs:
        row = run.model_dump(mode="json")
        for col in _JSON_COLUMNS:
            row[col] = json.dumps(row[col], ensure_ascii=False)
        rows.append(row)
    schema = pa.schema(
        [(name, pa.string()) for name in ("id", "question", "status", "created_at", "finished_at",
                                           "answer", "report", *_JSON_COLUMNS)]
    )
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return len(runs)


def read_parquet(path: Path) -> list[RunExport]:
    import pyarrow.parquet as pq

    out = []
    for row in pq.read_table(path).to_pylist():
        for col in _JSON_COLUMNS:
            row[col] = json.loads(row[col])
        out.append(RunExport.model_validate(row))
    return out
