"""`train --from-runs` through the real CLI: each logged question is replayed in the search set-up its own
run used — a web question on the user's SearxNG even when today's settings name none, an `ask --offline`
question on its local index only — and the round completes.

The model is a loopback OpenAI-compatible server answering every schema with its simplest instance
(tests/app/fake_openai.py), so the graph, tools, trace and train loop run for real in seconds; it returns
no token ids, so the round has nothing to update (that path is the vLLM acceptance test's). SearxNG is
a loopback double that records its queries (tests/train/searxng_double.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from deepresearch.agent.trace.store import TraceStore
from deepresearch.train.rounds.questions import TRAIN_TAG

from ..app.fake_openai import fake_openai_server
from ..app.helpers import clean_env, cli
from .searxng_double import searxng_double
from .tiny_model import save_tiny_llama

WEB_QUESTION = "Who designed the Analytical Engine?"
OFFLINE_QUESTION = "Who built the Jacquard loom?"


def searched_backends(store: TraceStore, run_id: str) -> set[str]:
    return {e.payload["output"]["backend"] for e in store.events(run_id, "tool")
            if e.payload.get("tool") == "search" and e.payload.get("output")}


def test_from_runs_replays_each_question_where_its_own_run_searched(tmp_path: Path):
    with fake_openai_server() as model, searxng_double() as searxng:
        env = clean_env(tmp_path, DEEPRESEARCH_MODEL__BACKEND="openai", DEEPRESEARCH_MODEL__NAME="fake",
                        DEEPRESEARCH_MODEL__BASE_URL=model.base_url, DEEPRESEARCH_AGENT__BUDGET__MAX_ROUNDS="1",
                        DEEPRESEARCH_AGENT__BUDGET__MAX_PLAN_STEPS="1", DEEPRESEARCH_TOOLS__SEARCH__CACHE="false",
                        DEEPRESEARCH_TOOLS__SEARCH__BACKENDS=json.dumps(["searxng", "local"]),
                        MODEL=str(save_tiny_llama(tmp_path / "weights")),  # the trainer's base model ($MODEL)
                        # the replays alone: no questions synthesized from what the runs read (test_synth_runs.py)
                        DEEPRESEARCH_TRAIN__SYNTH__FROM_RUNS="false")
        with_searxng = {**env, "DEEPRESEARCH_TOOLS__SEARCH__SEARXNG_URL": searxng.url}
        for args, run_env in ((["ask", WEB_QUESTION], with_searxng), (["ask", "--offline", OFFLINE_QUESTION], env)):
            asked = cli(*args, "--quiet", "--json", env=run_env)
            assert asked.returncode in (0, 1, 3), asked.stderr[-3000:]  # logged whatever the fake answered
        assert searxng.queries, "the web question's run did not search SearxNG"
        queried_by_users = len(searxng.queries)

        # Today's settings name no SearxNG: the web question is still replayed on the one its run used.
        trained = cli("train", "--from-runs", "--no-gate", "--group-size", "2", "--questions-per-round", "2",
                      env=env)
    assert trained.returncode == 0, trained.stderr[-3000:]
    assert (f"rollouts of 1 question(s) as their runs did: searxng ({searxng.url}) → local (demo)"
            in trained.stderr)
    assert ("rollouts of 1 question(s) as their runs did: the local index demo only (the runs were offline)"
            in trained.stderr)
    assert "round 1: 4 runs" in trained.stderr and "done: 1 round(s)" in trained.stdout
    assert len(searxng.queries) > queried_by_users

    store = TraceStore(tmp_path / "data" / "traces.db")
    try:
        rollouts = [r for r in store.list_runs(limit=None) if TRAIN_TAG in r.tags]
        by_question = {q: [r.id for r in rollouts if r.question == q] for q in (WEB_QUESTION, OFFLINE_QUESTION)}
        assert [len(ids) for ids in by_question.values()] == [2, 2]
        web = set().union(*(searched_backends(store, rid) for rid in by_question[WEB_QUESTION]))
        offline = set().union(*(searched_backends(store, rid) for rid in by_question[OFFLINE_QUESTION]))
    finally:
        store.close()
    assert "searxng" in web
    assert offline == {"local"}
