"""The full Planner–Coordinator–Executor graph as an eval system.

The graph logs its own calls to the trace store; this runs it through the shared run-and-score path
(evals/run/scored_run.py: the run's answer, citations with their doc ids, usage) and reads from the trace
what only the eval reports: the evidence its search/open calls returned (for the found-in-corpus
rate), completion tokens, example leaks, the writer's answer options and a sectioned report's check (scored by a
judge model too where eval.judge is on).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, NamedTuple

from deepresearch.agent.graph.events import AnswerScored, CitationsChecked, event_of
from deepresearch.agent.graph.report.report_events import ReportChecked
from deepresearch.agent.model.types import Completion
from deepresearch.agent.prompts import leaks_example
from deepresearch.evals.data.dataset import EvalQuestion
from deepresearch.evals.run.recorder import question_seed
from deepresearch.evals.run.results import EvalCitation, ReportFacts, StopReason, SystemOutput
from deepresearch.evals.run.scored_run import ScoredRun, run_scored
from deepresearch.evals.run.tooling import EvalTools, result_items
from deepresearch.evals.scoring.report_judge import judge_report
from deepresearch.tools.base import ToolOutcome

if TYPE_CHECKING:
    from deepresearch.agent.trace.store import TraceStore
    from deepresearch.evals.run.systems import SystemContext

EVIDENCE_TOOLS = frozenset({"search", "open"})
_STOP_REASONS: dict[str, StopReason] = {
    "finished": "finished", "budget_stop": "budget_stop", "loop_stop": "loop_stop", "error": "error",
}


class TraceFacts(NamedTuple):
    evidence: list[str]  # texts the run's search/open calls returned
    doc_ids: list[str]  # their document ids
    completion_tokens: int  # over the run's LLM calls
    leaked: bool  # an LLM output copied a few-shot example
    answer_options: list[str] | None  # what the writer could answer (None: no writer call recorded)
    candidates: list[str] | None  # the re-ranker's candidates, best first (None: it failed)
    confidence: float | None  # the writer's confidence in its best answer (None: not recorded)
    report: ReportFacts | None  # the sectioned report's check (None: a report of key points)


def evidence_from_trace(store: TraceStore, run_id: str, tools: EvalTools) -> TraceFacts:
    """What the eval needs from a graph run's trace."""
    texts: list[str] = []
    doc_ids: dict[str, None] = {}
    completion_tokens = 0
    leaked = False
    options: list[str] | None = None
    candidates: list[str] | None = None
    confidence: float | None = None
    report: ReportFacts | None = None
    scored = False  # fewer than two candidates (or a yes/no, A-or-B question) are not re-ranked
    for event in store.events(run_id):
        if event.kind == "citation_check":
            check = event_of(event.kind, event.payload)
            if isinstance(check, CitationsChecked) and check.answer_options is not None:
                options = check.answer_options
            if isinstance(check, CitationsChecked) and check.judgement is not None:
                value = check.judgement.get("confidence")
                confidence = float(value) if isinstance(value, int | float) else None
            continue
        if event.kind == ReportChecked.trace_kind:
            checked = event_of(event.kind, event.payload)
            if isinstance(checked, ReportChecked):
                # a written report that gave way to the quotes: the sentences the model wrote were checked and all
                # removed, so they count among the report's lines and its removed ones
                attempt = sum(len(s.get("lines") or []) for s in checked.written)
                report = ReportFacts(style=checked.style, lines=checked.lines + attempt, supported=checked.supported,
                                     dropped=checked.dropped + attempt,
                                     supported_citations=checked.supported_citations)
            continue
        if event.kind == "answer_scores":
            ranking = event_of(event.kind, event.payload)
            if isinstance(ranking, AnswerScored):
                scored = True
                if ranking.error is None:  # one ranking per hop's evidence when agent.bridge_hops > 1: their union
                    candidates = list(dict.fromkeys([*(candidates or []), *(c.text for c in ranking.candidates)]))
            continue
        if event.kind == "llm":
            completion = Completion.model_validate(event.payload)
            completion_tokens += len(completion.completion_token_ids)
            leaked = leaked or leaks_example(completion.text)
            continue
        if event.kind != "tool":
            continue
        call = ToolOutcome.model_validate(event.payload)
        if call.tool not in EVIDENCE_TOOLS:
            continue
        output: dict[str, Any] = call.output or {}
        items = result_items(output) or ([{**output, "url": call.input.get("url", "")}] if output.get("text") else [])
        for item in items:
            hit = tools.hit_from(item, ("text", "snippet"))
            if hit.text:
                texts.append(hit.text)
            if hit.doc_id:
                doc_ids.setdefault(hit.doc_id, None)
    return TraceFacts(texts, list(doc_ids), completion_tokens, leaked, options, candidates if scored else options,
                      confidence, report)


async def run_graph(question: EvalQuestion, ctx: SystemContext) -> SystemOutput:
    from deepresearch.agent.graph.run import ResearchRuntime, RunOptions  # heavy (langgraph); only when this runs

    tools = ctx.require_tools()
    started = time.perf_counter()
    runtime = ResearchRuntime(model=ctx.model, toolbox=tools.toolbox, store=ctx.store, settings=ctx.agent)
    options = RunOptions(tags=ctx.tags("graph", question), settings_snapshot={
        "system": "graph", "agent": ctx.agent.model_dump(mode="json"), "adapter": ctx.policy.adapter.label})
    policy = ctx.policy.with_seed(question_seed(ctx.evals.seed, question.id))
    # No gold here: the runner scores every system's output the same way (results.score_output, which
    # shares answer_scores with run_scored), baselines included.
    scored: ScoredRun[None] = await run_scored(question.question, runtime, policy, options,
                                               doc_id_for=tools.doc_id_for)
    if scored.result is None or scored.facts is None:  # recorded per question, as for the baselines
        return SystemOutput(stop_reason="error", error=scored.error, wall_s=time.perf_counter() - started)
    result, facts = scored.result, scored.facts
    trace = evidence_from_trace(ctx.store, result.run_id, tools)
    citations = [
        EvalCitation(
            n=int(c.get("n", i + 1)), source=str(c.get("source", "")), doc_id=c.get("doc_id"),
            quote=str(c.get("quote", "")), claim=str(c.get("claim", "")), verified=bool(c.get("verified", False)),
        )
        for i, c in enumerate(facts.citations)
    ]
    usage = result.usage or {}
    status = _STOP_REASONS.get(result.status, "error")
    report = trace.report
    if report is not None and ctx.evals.judge and result.report:
        report = report.model_copy(update={"judge": await judge_report(ctx.model, question.question, result.report)})
    return SystemOutput(
        answer=facts.answer, citations=citations, retrieved_doc_ids=trace.doc_ids, evidence=trace.evidence,
        tool_calls=facts.tool_calls, llm_calls=int(usage.get("llm_calls", 0)),
        llm_tokens=facts.llm_tokens, completion_tokens=trace.completion_tokens,
        wall_s=float(usage.get("wall_s") or (time.perf_counter() - started)), stop_reason=status,
        error=None if status != "error" else f"graph ended with status '{result.status}': {result.stop_detail}",
        run_id=result.run_id, leaked=trace.leaked, answer_options=trace.answer_options,
        answer_candidates=trace.candidates, confidence=trace.confidence, report=report,
    )
