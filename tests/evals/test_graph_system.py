"""The graph system's adapter: ResearchResult + the run's trace → a uniform SystemOutput.

`research` itself is replaced by a stand-in that logs real tool outcomes to a real trace store
(the graph is tested with the real model in tests/agent and in the pool eval run).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from deepresearch.agent.config import AgentSettings
from deepresearch.agent.graph import run as graph_run
from deepresearch.agent.model.policy import AdapterChoice, RunPolicy
from deepresearch.agent.model.types import Completion
from deepresearch.agent.trace.records import LLMCall
from deepresearch.agent.trace.store import TraceStore
from deepresearch.evals.config import EvalSettings
from deepresearch.evals.data.dataset import EvalQuestion
from deepresearch.evals.run.graph_system import evidence_from_trace, run_graph
from deepresearch.evals.run.results import SystemOutput, make_result
from deepresearch.evals.run.systems import SystemContext
from deepresearch.evals.run.tooling import EvalTools
from deepresearch.tools.base import ToolOutcome

from tests.evals.scripted_model import ScriptedModel

WEB = "http://127.0.0.1:9999"
QUESTION = EvalQuestion(id="q1", question="Where is the Eiffel Tower?", answer="Paris", gold_doc_ids=["d1", "d2"])


def _tools() -> EvalTools:
    from deepresearch.evals.run.environment import local_web_doc_id

    return EvalTools(search_tool=None, open_tool=None, doc_id_for=lambda u: local_web_doc_id(u, WEB),  # type: ignore[arg-type]
                     doc_text=lambda d: None, toolbox=object())


def _log_run(store: TraceStore, tags: dict) -> str:
    run_id = store.start_run(QUESTION.question, {}, tags)
    store.log_tool_call(run_id, ToolOutcome(tool="search", input={"query": "Eiffel"}, output={"hits": [
        {"title": "Eiffel Tower", "url": f"{WEB}/doc/d1", "snippet": "The Eiffel Tower is in Paris.", "doc_id": "d1"},
        {"title": "Tower", "url": f"{WEB}/doc/d3", "snippet": "A tower is tall.", "doc_id": None},
    ]}))
    store.log_tool_call(run_id, ToolOutcome(tool="open", input={"url": f"{WEB}/doc/d2"}, output={
        "url": f"{WEB}/doc/d2", "title": "Paris", "text": "Paris is the capital of France.", "doc_id": None}))
    store.log_tool_call(run_id, ToolOutcome(tool="python", input={"code": "1"}, output={"stdout": "Paris"}))
    store.log_tool_call(run_id, ToolOutcome(tool="open", input={"url": f"{WEB}/doc/zz"}, error="404",
                                            error_kind="http_error"))
    return run_id


def test_evidence_from_trace(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "t.db")
    run_id = _log_run(store, {})
    facts = evidence_from_trace(store, run_id, _tools())
    assert facts.evidence == ["The Eiffel Tower is in Paris.", "A tower is tall.", "Paris is the capital of France."]
    assert facts.doc_ids == ["d1", "d3", "d2"]  # python output is not retrieval evidence
    assert facts.leaked is False and facts.answer_options is None and facts.candidates is None
    store.close()


def test_trace_facts_record_the_writer_options_and_example_leaks(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "t.db")
    run_id = _log_run(store, {})
    store.log_event(run_id, "citation_check", {"checked": 0, "answer_options": ["Paris", "Lyon"]})
    completion = Completion(text='{"query": "<person> born"}', prompt_token_ids=[1], completion_token_ids=[2],
                            logprobs=[-0.1], model="m")
    store.log_llm_call(run_id, LLMCall("planner", [{"role": "user", "content": "q"}], completion))
    facts = evidence_from_trace(store, run_id, _tools())
    assert facts.answer_options == ["Paris", "Lyon"] and facts.leaked is True
    assert facts.candidates == ["Paris", "Lyon"]  # nothing re-ranked: the writer's options were all there was
    store.close()


def test_trace_facts_record_the_re_rankers_candidates_or_none_when_it_failed(tmp_path: Path) -> None:
    from deepresearch.agent.graph.events import AnswerScored, ScoredCandidate

    store = TraceStore(tmp_path / "t.db")
    ranked = _log_run(store, {})
    event = AnswerScored(template="t", weight=1.0, candidates=[
        ScoredCandidate("Lyon", features=2.0, likelihood=-1.0, quote="Lyon is a city."),
        ScoredCandidate("Paris", features=1.0, likelihood=-1.5, quote="Paris is the capital of France.")])
    store.log_event(ranked, event.trace_kind, event.trace_payload())
    store.log_event(ranked, "citation_check", {"checked": 0, "answer_options": ["Lyon"]})
    failed = _log_run(store, {})
    store.log_event(failed, "answer_scores", AnswerScored(error="scoring unsupported").trace_payload())
    store.log_event(failed, "citation_check", {"checked": 0, "answer_options": ["Lyon"]})
    facts = evidence_from_trace(store, ranked, _tools())
    assert facts.answer_options == ["Lyon"] and facts.candidates == ["Lyon", "Paris"]
    output = SystemOutput(answer="Lyon", evidence=facts.evidence, answer_options=facts.answer_options,
                          answer_candidates=facts.candidates)
    scores = make_result("e", "graph", QUESTION, output).scores
    assert scores.offered == 0.0 and scores.among_candidates == 1.0  # a perfect choice would have said Paris
    assert evidence_from_trace(store, failed, _tools()).candidates is None  # the five were never logged
    store.close()


async def test_run_graph_maps_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = TraceStore(tmp_path / "t.db")
    seen: dict = {}

    async def fake_research(question: str, runtime, policy, options) -> graph_run.ResearchResult:
        seen.update(runtime=runtime, policy=policy, options=options)
        run_id = _log_run(runtime.store, options.tags)
        return graph_run.ResearchResult(
            run_id=run_id, status="budget_stop", answer=" Paris ", report="# r",
            citations=[{"n": 1, "source": f"{WEB}/doc/d1", "doc_id": None, "quote": "q", "verified": True},
                       {"n": 2, "source": "https://example.com/x", "doc_id": None, "quote": "q", "verified": False}],
            usage={"llm_tokens": 900, "llm_calls": 7, "tool_calls": 4, "wall_s": 12.5},
        )

    monkeypatch.setattr(graph_run, "research", fake_research)
    policy = RunPolicy(adapter=AdapterChoice.named("v2"), temperature=0.5)
    ctx = SystemContext(model=ScriptedModel({}), store=store, agent=AgentSettings(), evals=EvalSettings(),
                        eval_id="e9", policy=policy, tools=_tools())
    output = await run_graph(QUESTION, ctx)
    assert seen["options"].tags == {"eval_id": "e9", "system": "graph", "question_id": "q1"}
    policy = seen["policy"]
    assert policy.adapter_for("writer") == "v2" and policy.temperature == 0.5 and policy.seed is not None
    assert seen["runtime"].toolbox is ctx.tools.toolbox
    assert output.answer == "Paris" and output.stop_reason == "budget_stop" and output.error is None
    assert (output.llm_tokens, output.llm_calls, output.tool_calls, output.wall_s) == (900, 7, 4, 12.5)
    assert [c.doc_id for c in output.citations] == ["d1", None]
    scores = make_result("e9", "graph", QUESTION, output).scores
    assert (scores.citation_precision, scores.citation_recall, scores.verified_share) == (1.0, 0.5, 0.5)
    assert scores.found_in_evidence == 1.0 and scores.em == 1.0
    store.close()


async def test_run_graph_error_status_and_exception(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = TraceStore(tmp_path / "t.db")
    ctx = SystemContext(model=ScriptedModel({}), store=store, agent=AgentSettings(), evals=EvalSettings(),
                        eval_id="e9", tools=_tools())

    async def errored(question: str, runtime, policy, options) -> graph_run.ResearchResult:
        run_id = runtime.store.start_run(question, {}, options.tags)
        return graph_run.ResearchResult(run_id=run_id, status="error", stop_detail="model server gone")

    monkeypatch.setattr(graph_run, "research", errored)
    output = await run_graph(QUESTION, ctx)
    assert output.stop_reason == "error" and "model server gone" in output.error

    async def raising(question: str, *args) -> graph_run.ResearchResult:
        raise RuntimeError("boom")

    monkeypatch.setattr(graph_run, "research", raising)
    output = await run_graph(QUESTION, ctx)
    assert output.stop_reason == "error" and output.error == "RuntimeError: boom"
    store.close()
