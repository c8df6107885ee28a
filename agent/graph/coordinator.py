"""Coordinator: dispatch ready steps in parallel, merge findings, decide continue / replan / finish.

The decision is rule-based on purpose: budgets, loop detection and "did this round add evidence"
are facts of the state, and a small policy model should not be trusted to enforce its own limits.
"""

from __future__ import annotations

from typing import Literal

from deepresearch.agent.prompts import load_prompt
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime
from langgraph.types import Command, Send

from .budget import call_signature, exhausted, share, usage_of
from .context import MalformedOutput, ResearchContext
from .findings import render_findings, unique_findings
from .schemas import DecisionOut, decision_schema
from .state import ExecutorTask, PlanStep, ResearchState


async def coordinator(state: ResearchState, runtime: Runtime[ResearchContext]) -> Command[
    Literal["executor", "planner", "writer"]
]:
    ctx = runtime.context
    budget = ctx.settings.budget
    emit = get_stream_writer()
    plan = state.get("plan", [])
    rnd = state.get("round", 0)
    findings = state.get("findings", [])

    # Close the round that just ran: did it add evidence?
    update: dict = {}
    stale = state.get("stale_rounds", 0)
    if rnd > 0 and not [s for s in plan if s["status"] in ("pending",)]:
        new = [f for f in findings if _round_of(f["step_id"], plan) == rnd]
        stale = 0 if new else stale + 1
        update["stale_rounds"] = stale

    emit({"event": "usage", "usage": usage_of(state), "round": rnd, "findings": len(findings)})

    def stop(reason: str, detail: str) -> Command:
        ctx.store.log_event(ctx.run_id, "budget", {"stop_reason": reason, "detail": detail})
        emit({"event": "stop", "reason": reason, "detail": detail})
        return Command(goto="writer", update={**update, "stop_reason": reason, "stop_detail": detail})

    if reason := exhausted(state, budget):
        return stop("budget_stop", reason)
    if stale >= budget.loop_window and rnd >= budget.loop_window:
        return stop("loop_stop", f"no new evidence in {stale} round(s) in a row")

    pending = [s for s in plan if s["status"] == "pending"]
    if pending:
        if rnd >= budget.max_rounds:
            return stop("budget_stop", f"round budget reached ({rnd} of {budget.max_rounds})")
        left = share(state, budget, len(pending))
        seen = [f"{c['tool']}:{c['input']}" for c in state.get("tool_calls", [])]
        dispatched = [{**s, "status": "running", "round": rnd + 1} for s in pending]
        sends = [Send("executor", ExecutorTask(question=state["question"], step=s, seen_calls=seen, budget_left=left))
                 for s in dispatched]
        update.update(plan=dispatched, round=rnd + 1)
        emit({"event": "dispatch", "round": rnd + 1, "steps": [s["id"] for s in dispatched]})
        return Command(goto=sends, update=update)

    if findings and rnd < budget.max_rounds and stale == 0:
        step, usage = await follow_up(state, ctx)
        if usage:
            update["usage"] = usage
        if step is not None:
            emit({"event": "plan", "steps": [step], "replan": True})
            return Command(goto="coordinator", update={**update, "plan": [step]})
    if findings:
        return Command(goto="writer", update={**update, "stop_reason": "finished", "stop_detail": ""})
    if rnd < budget.max_rounds:
        ctx.store.log_event(ctx.run_id, "replan", {"round": rnd, "why": "no evidence yet"})
        emit({"event": "replan", "round": rnd})
        return Command(goto="planner", update=update)
    return stop("budget_stop", f"no evidence found within {budget.max_rounds} round(s)")


async def follow_up(state: ResearchState, ctx: ResearchContext) -> tuple[PlanStep | None, dict | None]:
    """Ask the model whether the findings answer the question or one more search is needed (multi-hop)."""
    plan = state.get("plan", [])
    made = {c["input"] for c in state.get("tool_calls", []) if c["tool"] == "search"}
    findings = unique_findings(state.get("findings", []))[: ctx.settings.max_sources_in_prompt]
    try:
        out, usage = await ctx.ask_model(
            load_prompt("coordinator"), DecisionOut, decision_schema(), step="coordinator", max_tokens=64,
            question=state["question"], findings=render_findings(findings, ctx.settings.evidence_chars),
            searches="; ".join(sorted(made)) or "none",
        )
    except MalformedOutput:
        return None, None
    ctx.store.log_event(ctx.run_id, "decision", out.model_dump())
    if out.decision != "search" or call_signature("search", out.query).split(":", 1)[1] in made:
        return None, usage
    step = PlanStep(id=max((s["id"] for s in plan), default=0) + 1, goal=f"find: {out.query}", tool="search",
                    query=out.query, done_when="the missing fact is found", status="pending", round=-1)
    return step, usage


def _round_of(step_id: int, plan: list) -> int:
    return next((s["round"] for s in plan if s["id"] == step_id), -1)
