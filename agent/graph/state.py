"""Typed state of one research run. Plain dicts (TypedDict) so the checkpointer can store them."""

from __future__ import annotations

import operator
from typing import Annotated, Literal, NotRequired, TypedDict

StepStatus = Literal["pending", "running", "done", "failed", "skipped"]
StopReason = Literal["finished", "budget_stop", "loop_stop", "rejected", "error"]


class PlanStep(TypedDict):
    id: int
    goal: str
    tool: str  # suggested tool
    query: str  # the planned call's input (a search query, a URL, code, a memory query)
    done_when: str
    status: StepStatus
    round: int  # coordinator round that dispatched it (-1 until dispatched)
    bridge: NotRequired[str]  # a follow-up hop: the entity of the findings this step searches for
    rest: NotRequired[str]  # a follow-up hop: the question's words the sentence naming the bridge leaves open


class Finding(TypedDict):
    step_id: int
    claim: str  # what the finding is cited for: its quote (extractor), or the answer span (writer)
    quote: str  # verbatim sentence from the source text
    source: str  # URL (or local:// URL of an indexed document)
    title: str
    doc_id: str | None
    start: int  # character offsets of the quote in the source text
    end: int


class SourceRead(TypedDict):
    """A source whose full text the run fetched; its sentences are where answers are chosen from."""

    step_id: int
    url: str
    title: str
    doc_id: str | None
    rank: int  # position in the search results that surfaced it (0 = first)
    hop: bool  # surfaced by a follow-up hop for a bridge entity


class ToolCallRecord(TypedDict):
    step_id: int
    tool: str
    input: str
    ok: bool


class Usage(TypedDict):
    llm_tokens: int
    llm_calls: int
    tool_calls: int


def add_usage(a: Usage | None, b: Usage | None) -> Usage:
    a = a or {"llm_tokens": 0, "llm_calls": 0, "tool_calls": 0}
    b = b or {"llm_tokens": 0, "llm_calls": 0, "tool_calls": 0}
    return {k: a.get(k, 0) + b.get(k, 0) for k in ("llm_tokens", "llm_calls", "tool_calls")}  # type: ignore[return-value]


def merge_steps(old: list[PlanStep] | None, new: list[PlanStep] | None) -> list[PlanStep]:
    """Steps are keyed by id: an update replaces the step with the same id, new ids are appended."""
    by_id = {s["id"]: s for s in old or []}
    for step in new or []:
        by_id[step["id"]] = step
    return sorted(by_id.values(), key=lambda s: s["id"])


class Citation(TypedDict):
    n: int
    source: str
    title: str
    doc_id: str | None
    quote: str
    claim: str
    verified: bool
    reason: str  # why a citation failed the check ("" when verified)


class ResearchState(TypedDict, total=False):
    question: str
    memory: list[str]  # recalled notes from earlier runs
    plan: Annotated[list[PlanStep], merge_steps]
    plan_version: int
    round: int
    findings: Annotated[list[Finding], operator.add]
    sources: Annotated[list[SourceRead], operator.add]
    tool_calls: Annotated[list[ToolCallRecord], operator.add]
    usage: Annotated[Usage, add_usage]
    step_errors: Annotated[list[str], operator.add]
    stale_rounds: int  # consecutive rounds that added no new evidence
    started_at: float
    stop_reason: StopReason | None
    stop_detail: str
    answer: str
    report: str
    citations: list[Citation]


class ExecutorTask(TypedDict):
    """What the coordinator sends one executor (LangGraph `Send` payload)."""

    question: str
    step: PlanStep
    seen_calls: list[str]  # tool-call signatures already made in this run (loop detection)
    budget_left: Usage
