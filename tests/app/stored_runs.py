"""Runs written to a data dir's trace store by the real graph with a scripted model (no language model),
for tests of the commands that read runs back: `runs export`, `runs show --format`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from deepresearch.agent.graph.run import ResearchResult, ResearchRuntime, RunOptions, research
from deepresearch.agent.trace.store import TraceStore

from ..agent.conftest import DOCS, agent_settings, default_script
from ..agent.fakes import DictToolbox, ScriptedModel

QUESTION = "When was Ada Lovelace born?"


async def _research(store: TraceStore, question: str, tags: dict[str, Any] | None = None,
                    **budget: Any) -> ResearchResult:
    runtime = ResearchRuntime(ScriptedModel(default_script()), DictToolbox(dict(DOCS)), store, agent_settings(**budget))
    return await research(question, runtime, options=RunOptions(tags=tags))


def store_runs(data_dir: Path, *specs: tuple[str, dict[str, Any], dict[str, Any]]) -> list[ResearchResult]:
    """One run per (question, tags, budget) spec in `data_dir`/traces.db; the first is rated +1."""
    store = TraceStore(data_dir / "traces.db")
    try:
        results = [asyncio.run(_research(store, q, tags, **budget)) for q, tags, budget in specs]
        store.add_feedback(results[0].run_id, 1.0, "right answer")
    finally:
        store.close()
    return results


def finished_and_stopped(data_dir: Path) -> list[ResearchResult]:
    """A finished run with verified citations (rated) and a run stopped by its token budget."""
    return store_runs(data_dir, (QUESTION, {"train_round": 1}, {}), (QUESTION, {}, {"max_llm_tokens": 100}))
