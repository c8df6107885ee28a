"""The real thing: `deepresearch eval` with the embedded SmolLM2-135M on 2 pool dev questions.

Real model, real local index of the whole pool corpus, real local web, real search tool, real
trace store; then the same command again resumes with nothing left to do.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import typer  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

POOL = Path("/work/shared/data/pool")
pytestmark = pytest.mark.skipif(not POOL.is_dir(), reason="shared pool data not present")


def _app() -> typer.Typer:
    from deepresearch.app.cli import app

    if "eval" not in [g.name for g in app.registered_groups]:  # until app/cli.py lists the module
        from deepresearch.app.commands.eval import register

        register(app)
    return app


def test_embedded_model_two_questions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from deepresearch.agent.trace.store import TraceStore
    from deepresearch.app import settings as app_settings

    monkeypatch.setattr(app_settings, "_current", None)
    data = tmp_path / "data"
    out = tmp_path / "out"
    args = [
        "--data-dir", str(data), "eval", "--questions", str(POOL / "questions.jsonl"),
        "--corpus", str(POOL / "corpus.jsonl"), "--split", "dev", "--limit", "2",
        "--system", "closed-book,retrieve", "--concurrency", "4", "--out", str(out), "--no-progress",
    ]
    result = CliRunner().invoke(_app(), args)
    assert result.exit_code == 0, result.output + result.stderr
    assert "report:" in result.output

    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted((r["system"], r["question_id"]) for r in rows) == sorted(
        (s, q) for s in ("closed-book", "retrieve") for q in {r["question_id"] for r in rows}
    ) and len(rows) == 4
    for row in rows:
        output = row["output"]
        assert output["error"] is None
        assert output["llm_calls"] == 1 and output["llm_tokens"] > 20
        assert 0.0 <= row["scores"]["f1"] <= 1.0
    retrieve = [r for r in rows if r["system"] == "retrieve"]
    assert all(r["output"]["tool_calls"] == 1 and r["output"]["evidence"] for r in retrieve)
    assert all(r["scores"]["found_in_evidence"] is not None or r["yes_no"] for r in retrieve)

    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["systems"]) == {"closed-book", "retrieve"}
    assert "| metric | closed-book | retrieve |" in (out / "report.md").read_text()
    assert all((out / name).stat().st_size > 5_000 for name in ("metrics.png", "cost.png", "by_type.png"))

    store = TraceStore(data / "traces.db")
    try:
        runs = store.list_runs(limit=None, tags={"eval_id": summary["eval_id"]})
        assert len(runs) == 4 and all(r.status == "finished" for r in runs)
        llm = store.events(runs[0].id, kind="llm")[0].payload
        assert llm["completion_token_ids"] and len(llm["logprobs"]) == len(llm["completion_token_ids"])
    finally:
        store.close()

    monkeypatch.setattr(app_settings, "_current", None)
    again = CliRunner().invoke(_app(), args)  # resumed: everything is done, nothing runs twice
    assert again.exit_code == 0, again.output + again.stderr
    assert len((out / "results.jsonl").read_text().splitlines()) == 4
