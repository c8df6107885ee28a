"""The one run-and-score path (evals/run/scored_run.py) and the learning demo's dev rewards through it.

`research` is replaced by a stand-in that writes a real trace (findings, a malformed reply, the finished
run) to a real store, as the graph does; the graph itself is tested with the real model elsewhere.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from deepresearch.agent.config import AgentSettings
from deepresearch.agent.graph import run as graph_run
from deepresearch.agent.graph.run import ResearchRuntime, RunOptions
from deepresearch.agent.model.policy import RunPolicy
from deepresearch.agent.trace.store import TraceStore
from deepresearch.evals.data.dataset import EvalQuestion
from deepresearch.evals.run.scored_run import answer_scores, facts_from_trace, run_scored
from deepresearch.train.config import TrainSettings
from deepresearch.train.rounds.questions import TrainQuestion
from deepresearch.train.rounds.rewards import score_run

WEB = "http://127.0.0.1:9999"
DEMO = Path(__file__).resolve().parents[2] / "scripts" / "learning_demo.py"


def doc_id_for(url: str) -> str | None:
    return url.rsplit("/", 1)[-1] if url.startswith(f"{WEB}/doc/") else None


async def fake_research(question: str, runtime: ResearchRuntime, policy: RunPolicy,
                        options: RunOptions) -> graph_run.ResearchResult:
    """Writes what the graph writes: findings (one naming no doc id), the writer's first malformed reply,
    and the finished run with the result's record."""
    store = runtime.store
    run_id = store.start_run(question, {}, options.tags)
    store.log_event(run_id, "finding", {"claim": "c", "quote": "q", "source": f"{WEB}/doc/d2", "doc_id": None})
    store.log_event(run_id, "error", {"role": "writer", "attempt": 1, "error": "bad json"})
    result = graph_run.ResearchResult(
        run_id=run_id, status="finished", answer=" Paris ", report="# r",
        citations=[{"n": 1, "source": f"{WEB}/doc/d1", "doc_id": None, "quote": "q", "verified": True}],
        usage={"llm_tokens": 900, "llm_calls": 7, "tool_calls": 4, "wall_s": 1.5},
    )
    store.finish_run(run_id, result.status, result.answer, result.report, result.citations, result.usage)
    return result


@pytest.fixture
def runtime(tmp_path: Path):
    store = TraceStore(tmp_path / "t.db")
    yield ResearchRuntime(model=None, toolbox=None, store=store, settings=AgentSettings())  # type: ignore[arg-type]
    store.close()


async def test_scores_against_gold_with_the_url_fallback(runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(graph_run, "research", fake_research)
    q = TrainQuestion(id="q1", question="Where is the Eiffel Tower?", answer="Paris", gold_doc_ids=["d2", "d9"])
    cfg = TrainSettings().rewards
    scored = await run_scored(q.question, runtime, RunPolicy(seed=3), RunOptions(tags={"k": "v"}), gold=q,
                              doc_id_for=doc_id_for, reward=lambda facts: score_run(facts, q, cfg))
    assert scored.error is None and scored.run_id == scored.result.run_id
    assert (scored.em, scored.f1, scored.gold_evidence) == (1.0, 1.0, True)  # d2 found only by its URL
    facts = scored.facts
    assert facts.answer == "Paris" and facts.citations[0]["doc_id"] == "d1" and facts.evidence_doc_ids == ["d2"]
    assert (facts.tool_calls, facts.llm_tokens, facts.failed_roles) == (4, 900, [])  # attempt 1 is retried
    # What the score phase reads later from the trace is the same: one reading of a run for every caller.
    assert facts_from_trace(runtime.store, scored.run_id, doc_id_for) == facts
    assert scored.reward == score_run(facts, q, cfg) and scored.reward.tier == "correct"


async def test_no_gold_no_scores_and_a_raising_run_is_an_error(runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(graph_run, "research", fake_research)
    scored = await run_scored("q?", runtime, RunPolicy(), RunOptions())
    assert scored.facts is not None and (scored.em, scored.f1, scored.gold_evidence, scored.reward) == (None,) * 4

    async def raising(*args) -> graph_run.ResearchResult:
        raise RuntimeError("boom")

    monkeypatch.setattr(graph_run, "research", raising)
    scored = await run_scored("q?", runtime, RunPolicy(), RunOptions())
    assert scored.run_id is None and scored.facts is None and scored.error == "RuntimeError: boom"


def test_answer_scores_yes_no_by_em_only() -> None:
    yes_no = EvalQuestion(id="y", question="Is it?", answer="no")
    assert answer_scores("no, it is not", yes_no) == (0.0, 0.0)
    assert answer_scores("the Paris", EvalQuestion(id="p", question="Where?", answer="Paris")) == (1.0, 1.0)


async def test_learning_demo_dev_rewards(runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("learning_demo", DEMO)
    demo = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "learning_demo", demo)
    spec.loader.exec_module(demo)
    monkeypatch.setattr(graph_run, "research", fake_research)
    questions = [TrainQuestion(id="q1", question="Where is it?", answer="Paris", gold_doc_ids=["d2"]),
                 TrainQuestion(id="q2", question="Where else?", answer="Rome", gold_doc_ids=["d7"])]
    cfg = SimpleNamespace(rewards=TrainSettings().rewards)
    runs = await demo.dev_rewards(questions, runtime, RunPolicy(seed=0), label="before", doc_id_for=doc_id_for,
                                  cfg=cfg, concurrency=2)
    assert [(r["question_id"], r["tier"], r["gold_evidence"]) for r in runs] == [
        ("q1", "correct", True), ("q2", "wrong", False)]
    assert runs[0]["reward"] == score_run(facts_from_trace(runtime.store, runs[0]["run_id"], doc_id_for),
                                          questions[0], cfg.rewards).total
    assert demo.gold_evidence(runtime.store, runs[0]["run_id"], ["d2"], doc_id_for)
