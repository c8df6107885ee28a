"""Runs as Parquet with typed nested columns: one row per run, structs and lists rather than JSON text.

- citations: list<struct<n, source, title, doc_id, quote, claim, verified, reason>>
- feedback:  list<struct<ts, score, comment>>
- events:    list<struct<seq, kind, ts, role, step, tool, model, adapter, prompt_version, error,
             prompt_token_ids: list<int64>, completion_token_ids: list<int64>, logprobs: list<double>,
             payload>>; `payload` is JSON of the rest of the event (a tool's input and output vary too
             much to type), so every event reads back exactly.
- settings, tags, usage: structs inferred from the runs exported. Where they cannot be typed
  (one key holding a number in one run and text in another, an empty table), that column is JSON
  text and the file's schema metadata lists it under `deepresearch.json_columns`. A null in these
  structs reads back as an absent key.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from .records import RunExport

JSON_COLUMNS_KEY = b"deepresearch.json_columns"
INFERRED = ("settings", "tags", "usage")

CITATION = pa.struct([
    ("n", pa.int64()), ("source", pa.string()), ("title", pa.string()), ("doc_id", pa.string()),
    ("quote", pa.string()), ("claim", pa.string()), ("verified", pa.bool_()), ("reason", pa.string()),
])
FEEDBACK = pa.struct([("ts", pa.float64()), ("score", pa.float64()), ("comment", pa.string())])
EVENT_TEXT = ("role", "step", "tool", "model", "adapter", "prompt_version", "error")
EVENT_INTS = ("prompt_token_ids", "completion_token_ids")
EVENT_FLOATS = ("logprobs",)
EVENT = pa.struct([
    ("seq", pa.int64()), ("kind", pa.string()), ("ts", pa.float64()),
    *((name, pa.string()) for name in EVENT_TEXT),
    *((name, pa.list_(pa.int64())) for name in EVENT_INTS),
    *((name, pa.list_(pa.float64())) for name in EVENT_FLOATS),
    ("payload", pa.string()),
])
FIXED = {
    "id": pa.string(), "question": pa.string(), "status": pa.string(),
    "created_at": pa.timestamp("us", tz="UTC"), "finished_at": pa.timestamp("us", tz="UTC"),
    "answer": pa.string(), "report": pa.string(),
    "citations": pa.list_(CITATION), "feedback": pa.list_(FEEDBACK), "events": pa.list_(EVENT),
}
COLUMNS = ("id", "question", "status", "created_at", "finished_at", "answer", "report", "settings", "tags",
           "citations", "usage", "feedback", "events")


def _fits(name: str, value: Any) -> bool:
    """Whether an event payload value has the type of its typed field (else it stays in the JSON rest)."""
    if name in EVENT_TEXT:
        return isinstance(value, str)
    if name in EVENT_INTS:
        return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    return isinstance(value, list) and all(isinstance(v, float) for v in value)


def _event_row(event: dict[str, Any]) -> dict[str, Any]:
    rest = dict(event["payload"])
    row: dict[str, Any] = {"seq": event["seq"], "kind": event["kind"], "ts": event["ts"]}
    for name in (*EVENT_TEXT, *EVENT_INTS, *EVENT_FLOATS):
        if name in rest and _fits(name, rest[name]):
            row[name] = rest.pop(name)
    row["payload"] = json.dumps(rest, ensure_ascii=False)
    return row


def _event_back(row: dict[str, Any]) -> dict[str, Any]:
    payload = json.loads(row["payload"])
    for name in (*EVENT_TEXT, *EVENT_INTS, *EVENT_FLOATS):
        if row.get(name) is not None:
            payload[name] = row[name]
    return {"seq": row["seq"], "kind": row["kind"], "ts": row["ts"], "payload": payload}


def _has_empty_struct(kind: pa.DataType) -> bool:
    if pa.types.is_struct(kind):
        return kind.num_fields == 0 or any(_has_empty_struct(kind.field(i).type) for i in range(kind.num_fields))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _has_empty_struct(kind.value_type)
    return False


def _inferred(values: list[dict[str, Any]]) -> tuple[pa.Array, bool]:
    """(column, is_json): a struct column inferred from the values, or JSON text where none fits."""
    try:
        column = pa.array(values)
        if not _has_empty_struct(column.type):
            return column, False
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        pass
    return pa.array([json.dumps(v, ensure_ascii=False) for v in values], pa.string()), True


def runs_table(runs: list[RunExport]) -> pa.Table:
    rows = [run.model_dump(mode="python") for run in runs]
    for row in rows:
        row["events"] = [_event_row(e) for e in row["events"]]
    arrays, fields, json_columns = [], [], []
    for name in COLUMNS:
        values = [row[name] for row in rows]
        if name in INFERRED:
            column, is_json = _inferred(values)
            if is_json:
                json_columns.append(name)
        else:
            column = pa.array(values, FIXED[name])
        arrays.append(column)
        fields.append(pa.field(name, column.type))
    schema = pa.schema(fields, metadata={JSON_COLUMNS_KEY: json.dumps(json_columns).encode()})
    return pa.Table.from_arrays(arrays, schema=schema)


def write_parquet(runs: list[RunExport], path: Path | BinaryIO) -> int:
    pq.write_table(runs_table(runs), path)
    return len(runs)


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def read_parquet(path: Path) -> list[RunExport]:
    table = pq.read_table(path)
    json_columns = set(json.loads((table.schema.metadata or {}).get(JSON_COLUMNS_KEY, b"[]")))
    runs = []
    for row in table.to_pylist():
        for name in INFERRED:
            row[name] = json.loads(row[name]) if name in json_columns else _drop_nulls(row[name] or {})
        row["events"] = [_event_back(e) for e in row["events"]]
        runs.append(RunExport.model_validate(row))
    return runs
