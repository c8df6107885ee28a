"""The systems an eval compares, all on the same model, adapter and budget.

    closed-book  one LLM call, no tools
    retrieve     top-k search through the real search tool, then one LLM call over the passages
    agent-loop   one model in a bounded search/open loop, then one answer call
    graph        the full Planner–Coordinator–Executor graph (`deepresearch.agent.graph.run.research`)
    reader       the graph's answer reader alone over the question's own search, no LLM call (reader_system.py)

Each returns a `SystemOutput`; every LLM and tool call is in the trace store, tagged with the
eval id, the system and the question id.

Baseline citations name one source; a citation is *verified* when that source's full text
contains the answer (the graph verifies quotes with its own citation checker).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deepresearch.agent.config import AgentSettings
from deepresearch.agent.model.base import ChatModel
from deepresearch.agent.model.policy import RunPolicy
from deepresearch.agent.model.types import Completion, Message, Sampling
from deepresearch.evals.config import EvalSettings
from deepresearch.evals.data.dataset import EvalQuestion
from deepresearch.evals.run import baseline_prompts as prompts
from deepresearch.evals.run.recorder import RunRecorder, question_seed
from deepresearch.evals.run.results import EvalCitation, SystemOutput
from deepresearch.evals.run.tooling import EvalTools, Hit
from deepresearch.evals.scoring.metrics import answer_in_text, normalize_answer

if TYPE_CHECKING:
    from deepresearch.agent.trace.store import TraceStore

SYSTEM_NAMES = ("closed-book", "retrieve", "agent-loop", "graph", "reader")
TOOL_FREE_SYSTEMS = frozenset({"closed-book"})
_MAX_ANSWER_CHARS = 300
_JSON_ANSWER = re.compile(r'"answer"\s*:\s*"((?:[^"\\]|\\.)*)')
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass
class SystemContext:
    """Everything a system needs for one eval; shared by all questions."""

    model: ChatModel
    store: TraceStore
    agent: AgentSettings
    evals: EvalSettings
    eval_id: str
    # The adapter every system answers with, the temperature, and the graph's completion cap per call.
    policy: RunPolicy = RunPolicy()
    tools: EvalTools | None = None

    def sampling(self, question_id: str, max_tokens: int) -> Sampling:
        return Sampling(
            temperature=self.policy.temperature, max_tokens=max_tokens,
            seed=question_seed(self.evals.seed, question_id),
        )

    def tags(self, system: str, question: EvalQuestion) -> dict[str, str]:
        return {"eval_id": self.eval_id, "system": system, "question_id": question.id}

    def recorder(self, system: str, question: EvalQuestion) -> RunRecorder:
        settings = {
            "system": system, "agent": self.agent.model_dump(mode="json"), "evals": self.evals.model_dump(mode="json"),
            "adapter": self.policy.adapter.label, "temperature": self.policy.temperature,
        }
        return RunRecorder(
            store=self.store, model=self.model, question=question.question, tags=self.tags(system, question),
            settings=settings, budget=self.agent.budget, policy=self.policy,
        )

    def require_tools(self) -> EvalTools:
        if self.tools is None:
            raise RuntimeError("this system needs the search tools, but the eval was started without them")
        return self.tools


# --- helpers shared by the baselines ---------------------------------------------------------
def parse_answer(completion: Completion) -> tuple[str, int | None]:
    """(answer, cited source number) from a JSON answer, tolerating a truncated completion."""
    parsed = completion.parsed
    if isinstance(parsed, dict):
        source = parsed.get("source")
        return str(parsed.get("answer", "")).strip()[:_MAX_ANSWER_CHARS], source if isinstance(source, int) else None
    match = _JSON_ANSWER.search(completion.text)
    if match:
        return match.group(1).strip()[:_MAX_ANSWER_CHARS], None
    lines = completion.text.strip().splitlines()
    return (lines[0].strip()[:_MAX_ANSWER_CHARS] if lines else ""), None


def _supporting_sentence(text: str, answer: str) -> str:
    norm = f" {normalize_answer(answer)} "
    for sentence in _SENTENCE_END.split(text):
        if norm.strip() and norm in f" {normalize_answer(sentence)} ":
            return sentence.strip()
    return text[:200].strip()


def cite(n: int, hit: Hit, answer: str, tools: EvalTools) -> EvalCitation:
    """A baseline citation of source `n`, verified when its full text contains the answer."""
    text = (tools.doc_text(hit.doc_id) if hit.doc_id else None) or hit.text
    verified = bool(normalize_answer(answer)) and answer_in_text([text], answer)
    return EvalCitation(
        n=n, source=hit.url or (hit.doc_id or ""), doc_id=hit.doc_id, quote=_supporting_sentence(text, answer),
        verified=verified,
    )


def source_text(hit: Hit, tools: EvalTools) -> str:
    return (tools.doc_text(hit.doc_id) if hit.doc_id else None) or hit.text


async def guarded(rec: RunRecorder, body: Callable[[], Awaitable[SystemOutput]]) -> SystemOutput:
    """Run a baseline; a failure becomes an `error` result instead of ending the eval."""
    try:
        return await body()
    except Exception as exc:  # recorded per question: errors are a metric, not a crash
        return rec.finish(
            answer="", citations=[], stop_reason="error", evidence=None, retrieved_doc_ids=[],
            error=f"{type(exc).__name__}: {exc}",
        )


async def _answer_over(
    rec: RunRecorder, ctx: SystemContext, question: EvalQuestion, shown: list[tuple[int, Hit]], system: str,
) -> tuple[str, list[EvalCitation]]:
    """One answer call over numbered sources; returns the answer and its (0 or 1) citation."""
    tools = ctx.require_tools()
    clip = ctx.agent.evidence_chars
    blocks = [(n, h.title, source_text(h, tools)[:clip]) for n, h in shown]
    system_prompt = prompts.RETRIEVE_SYSTEM if shown else prompts.CLOSED_BOOK_SYSTEM
    schema = prompts.cited_answer_schema([n for n, _ in shown]) if shown else prompts.ANSWER_SCHEMA
    messages = [
        Message(role="system", content=system_prompt),
        Message(role="user", content=prompts.retrieve_user(question.question, blocks)),
    ]
    completion = await rec.chat(
        "answerer", messages, schema, ctx.sampling(question.id, ctx.evals.answer_max_tokens),
        prompt_version=f"{prompts.PROMPT_VERSION}:{system}",
    )
    answer, source = parse_answer(completion)
    by_number = dict(shown)
    citations = [cite(source, by_number[source], answer, tools)] if source in by_number else []
    return answer, citations


# --- the systems -----------------------------------------------------------------------------
async def run_closed_book(question: EvalQuestion, ctx: SystemContext) -> SystemOutput:
    rec = ctx.recorder("closed-book", question)

    async def body() -> SystemOutput:
        messages = [
            Message(role="system", content=prompts.CLOSED_BOOK_SYSTEM),
            Message(role="user", content=prompts.closed_book_user(question.question)),
        ]
        completion = await rec.chat(
            "answerer", messages, prompts.ANSWER_SCHEMA, ctx.sampling(question.id, ctx.evals.answer_max_tokens),
            prompt_version=f"{prompts.PROMPT_VERSION}:closed-book",
        )
        answer, _ = parse_answer(completion)
        return rec.finish(answer=answer, citations=[], stop_reason="finished", evidence=None, retrieved_doc_ids=[])

    return await guarded(rec, body)


async def run_retrieve(question: EvalQuestion, ctx: SystemContext) -> SystemOutput:
    rec = ctx.recorder("retrieve", question)

    async def body() -> SystemOutput:
        tools = ctx.require_tools()
        # The search tool takes at most 500 characters; questions are shorter than that in practice.
        hits, _error = await tools.search(rec, question.question[:500], ctx.evals.retrieve_k)
        shown = list(enumerate(hits, start=1))
        answer, citations = await _answer_over(rec, ctx, question, shown, "retrieve")
        return rec.finish(
            answer=answer, citations=citations, stop_reason="finished",
            evidence=[source_text(h, tools) for h in hits], retrieved_doc_ids=[h.doc_id for h in hits if h.doc_id],
        )

    return await guarded(rec, body)


class _LoopSources:
    """Sources the agent loop has seen, numbered in order of first sight (numbers never change)."""

    def __init__(self) -> None:
        self.hits: list[Hit] = []
        self.opened: set[int] = set()
        self.evidence: list[str] = []

    def add(self, hit: Hit) -> int:
        key = hit.doc_id or hit.url
        for n, old in enumerate(self.hits, start=1):
            if key and (old.doc_id or old.url) == key:
                return n
        self.hits.append(hit)
        return len(self.hits)

    def shown(self, limit: int) -> list[tuple[int, Hit]]:
        """Opened sources first, then the rest by first sight, at most `limit`."""
        numbered = list(enumerate(self.hits, start=1))
        ordered = [p for p in numbered if p[0] in self.opened] + [p for p in numbered if p[0] not in self.opened]
        return sorted(ordered[:limit], key=lambda p: p[0])


async def _loop_step(
    action: dict[str, Any], rec: RunRecorder, ctx: SystemContext, sources: _LoopSources, searched: dict[str, str],
) -> tuple[str, bool]:
    """Carry out one search/open action; returns (observation for the next prompt, was it new)."""
    tools = ctx.require_tools()
    tool, query = action.get("tool"), str(action.get("query", "")).strip()
    if tool == "search":
        key = normalize_answer(query)
        if not key or key in searched:
            return f"search '{query}' was already done or is empty; try other words or open a result", False
        searched[key] = query
        hits, error = await tools.search(rec, query, ctx.evals.retrieve_k)
        if error:
            return f"search failed: {error}", False
        sources.evidence += [h.text for h in hits]
        numbers = [sources.add(h) for h in hits]
        return f"search '{query}' gave sources {numbers}" if numbers else f"search '{query}' found nothing", True
    if tool == "open":
        digits = re.search(r"\d+", query)
        n = int(digits.group()) if digits else 0
        if not 1 <= n <= len(sources.hits):
            return f"open needs the number of a source (1..{len(sources.hits)})", False
        if n in sources.opened:
            return f"source [{n}] is already open", False
        page, error = await tools.open(rec, sources.hits[n - 1].url)
        if page is None:
            return f"open [{n}] failed: {error}", False
        old = sources.hits[n - 1]
        update = {"text": page.text or old.text, "doc_id": old.doc_id or page.doc_id}
        sources.hits[n - 1] = old.model_copy(update=update)
        sources.opened.add(n)
        sources.evidence.append(page.text)
        return f"opened [{n}] {old.title}", True
    return "unknown action; use search, open or answer", False


async def run_agent_loop(question: EvalQuestion, ctx: SystemContext) -> SystemOutput:
    rec = ctx.recorder("agent-loop", question)

    async def body() -> SystemOutput:
        sources, searched = _LoopSources(), {}
        observation, stale, stop = "none yet", 0, "budget_stop"
        max_turns = ctx.evals.loop_max_turns
        for turn in range(1, max_turns + 1):
            if rec.out_of_budget():
                break
            shown = [(n, h.title, h.text[: ctx.agent.evidence_chars])
                     for n, h in sources.shown(ctx.agent.max_sources_in_prompt)]
            messages = [
                Message(role="system", content=prompts.LOOP_SYSTEM),
                Message(role="user", content=prompts.loop_user(
                    question.question, shown, observation, turn, max_turns, list(searched.values()))),
            ]
            completion = await rec.chat(
                "agent", messages, prompts.ACTION_SCHEMA, ctx.sampling(f"{question.id}#{turn}", 64),
                prompt_version=f"{prompts.PROMPT_VERSION}:agent-loop",
            )
            action = completion.parsed if isinstance(completion.parsed, dict) else {}
            if action.get("tool") == "answer":
                stop = "finished"
                break
            observation, new = await _loop_step(action, rec, ctx, sources, searched)
            stale = 0 if new else stale + 1
            if stale >= ctx.agent.budget.loop_window:
                stop = "loop_stop"
                break
        shown_hits = sources.shown(ctx.agent.max_sources_in_prompt)
        answer, citations = await _answer_over(rec, ctx, question, shown_hits, "agent-loop")
        return rec.finish(
            answer=answer, citations=citations, stop_reason=stop, evidence=sources.evidence,
            retrieved_doc_ids=[h.doc_id for h in sources.hits if h.doc_id],
        )

    return await guarded(rec, body)


SystemFn = Callable[[EvalQuestion, SystemContext], Awaitable[SystemOutput]]


def get_system(name: str) -> SystemFn:
    from deepresearch.evals.run.graph_system import run_graph
    from deepresearch.evals.run.reader_system import run_reader

    table: dict[str, SystemFn] = {
        "closed-book": run_closed_book, "retrieve": run_retrieve, "agent-loop": run_agent_loop, "graph": run_graph,
        "reader": run_reader,
    }
    if name not in table:
        raise ValueError(f"unknown system '{name}' (choose from {', '.join(SYSTEM_NAMES)})")
    return table[name]
