"""`deepresearch runs export` to CSV (flat, spreadsheet-safe) and Parquet (typed nested columns)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deepresearch.agent.trace import export
from deepresearch.agent.trace.parquet import JSON_COLUMNS_KEY, read_parquet
from deepresearch.agent.trace.store import TraceStore

from .helpers import clean_env, cli, one_error_line
from .stored_runs import QUESTION, finished_and_stopped, store_runs


def _collect(data: Path) -> list:
    store = TraceStore(data / "traces.db")
    try:
        return export.collect(store, [r.id for r in store.list_runs(limit=None)])
    finally:
        store.close()


def test_csv_export_is_one_flat_row_per_run(tmp_path: Path):
    results = finished_and_stopped(tmp_path / "data")
    out = tmp_path / "runs.csv"
    proc = cli("runs", "export", str(out), env=clean_env(tmp_path))
    assert proc.returncode == 0 and "exported 2 run(s)" in proc.stdout, proc.stderr
    with out.open(newline="", encoding="utf-8") as fh:
        rows = {r["id"]: r for r in csv.DictReader(fh)}
    assert set(rows) == {r.run_id for r in results}
    finished, stopped = rows[results[0].run_id], rows[results[1].run_id]
    assert finished["status"] == "finished" and stopped["status"] == "budget_stop"
    assert finished["question"] == QUESTION and finished["answer"] == "1815"
    assert int(finished["verified_citations"]) == results[0].verified_citations >= 1
    assert int(finished["llm_tokens"]) == results[0].usage["llm_tokens"]
    assert finished["feedback_count"] == "1" and float(finished["feedback_mean"]) == 1.0
    assert "local://test/d1" in finished["sources"].split()
    assert int(finished["events"]) > 0


def test_csv_cells_never_start_a_formula(tmp_path: Path):
    store_runs(tmp_path / "data", ('=HYPERLINK("http://evil.example","When was Ada Lovelace born?")', {}, {}))
    out = tmp_path / "runs.csv"
    assert cli("runs", "export", str(out), env=clean_env(tmp_path)).returncode == 0
    with out.open(newline="", encoding="utf-8") as fh:
        row = next(csv.DictReader(fh))
    assert row["question"].startswith("'=HYPERLINK(")


def test_parquet_columns_are_typed_and_read_back_exactly(tmp_path: Path):
    data = tmp_path / "data"
    finished_and_stopped(data)
    out = tmp_path / "runs.parquet"
    proc = cli("runs", "export", str(out), env=clean_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    schema = pq.read_schema(out)
    citation = schema.field("citations").type.value_type
    assert pa.types.is_struct(citation) and citation.field("verified").type == pa.bool_()
    event = schema.field("events").type.value_type
    assert event.field("prompt_token_ids").type == pa.list_(pa.int64())
    assert event.field("logprobs").type == pa.list_(pa.float64())
    assert schema.field("usage").type.field("llm_tokens").type == pa.int64()
    assert pa.types.is_struct(schema.field("settings").type) and pa.types.is_struct(schema.field("tags").type)
    assert schema.field("feedback").type.value_type.field("score").type == pa.float64()
    assert json.loads(schema.metadata[JSON_COLUMNS_KEY]) == []
    # Queryable without our code: the token ids of every LLM call, as numbers.
    events = pq.read_table(out, columns=["events"]).column("events").to_pylist()
    llm = [e for run in events for e in run if e["kind"] == "llm"]
    assert llm and all(isinstance(t, int) for e in llm for t in e["completion_token_ids"])

    expected = {r.id: r for r in _collect(data)}
    for run in read_parquet(out):
        want = expected[run.id]
        assert run.events == want.events  # every event payload, exactly
        assert run.citations == want.citations and run.feedback == want.feedback and run.usage == want.usage
        assert (run.question, run.status, run.answer, run.report, run.created_at) == \
            (want.question, want.status, want.answer, want.report, want.created_at)
        assert run.tags == want.tags


def test_parquet_keeps_untypeable_settings_as_json(tmp_path: Path):
    data = tmp_path / "data"
    store_runs(data, (QUESTION, {"round": 1}, {}), (QUESTION, {"round": "first"}, {}))  # int vs text
    runs = _collect(data)
    out = tmp_path / "runs.parquet"
    export.write_parquet(runs, out)
    assert json.loads(pq.read_schema(out).metadata[JSON_COLUMNS_KEY]) == ["tags"]
    assert sorted(str(r.tags["round"]) for r in read_parquet(out)) == ["1", "first"]
    assert {r.id: r.tags for r in read_parquet(out)} == {r.id: r.tags for r in runs}


@pytest.mark.parametrize(("target", "extra", "message"), [
    ("runs.txt", (), "must be .jsonl, .parquet or .csv"),
    ("no/such/dir/runs.csv", (), "does not exist"),
    ("adir.csv", (), "is a directory"),
    ("runs.csv", ("--run", "nosuchrun"), "no run with id 'nosuchrun'"),
    ("runs.csv", ("--since", "yesterday"), "--since"),
])
def test_bad_export_input_is_one_line_exit_2_and_writes_nothing(tmp_path: Path, target: str, extra: tuple,
                                                                  message: str):
    finished_and_stopped(tmp_path / "data")
    (tmp_path / "adir.csv").mkdir()
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = cli("runs", "export", str(tmp_path / target), *extra, env=clean_env(tmp_path))
    assert proc.returncode == 2, proc.stderr
    assert message in one_error_line(proc)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
