"""Coordinator: dispatch ready steps in parallel, merge findings, decide continue / replan / finish.

The decision is rule-based on purpose: budgets, loop detection and "did this round add evidence"
are facts of the state, and a small policy model should not be trusted to enforce its own limits.
"""

from __future__ import annotations

from typing import Literal

from deepresearch.agent.prompts import load_prompt
from langgraph.runtime import Runtime
from langgraph.types import Command, Send

from .answer_form import answer_choices
from .budget import exhausted, recorded_signature, share, usage_of
from .candidates import BRIDGE_W, rank_candidates
from .context import MalformedOutput, ResearchContext
from .events import BridgeChosen, Replanning, StepsDispatched, Stopped, UsageReported
from .evidence import normalise
from .findings import render_findings, unique_findings
from .reading import read_sentences
from .schemas import BridgeOut, bridge_schema
from .state import ExecutorTask, PlanStep, ResearchState


async def coordinator(state: ResearchState, runtime: Runtime[ResearchContext]) -> Command[
    Literal["executor", "planner", "writer"]
]:
    ctx = runtime.context
    budget = ctx.settings.budget
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

    ctx.record(UsageReported(usage=usage_of(state), round=rnd, findings=len(findings)))

    def stop(reason: str, detail: str) -> Command:
        ctx.record(Stopped(reason, detail))
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
        seen = [recorded_signature(c) for c in state.get("tool_calls", [])]
        dispatched = [{**s, "status": "running", "round": rnd + 1} for s in pending]
        sends = [Send("executor", ExecutorTask(question=state["question"], step=s, seen_calls=seen, budget_left=left))
                 for s in dispatched]
        update.update(plan=dispatched, round=rnd + 1)
        ctx.record(StepsDispatched(round=rnd + 1, steps=[s["id"] for s in dispatched]))
        return Command(goto=sends, update=update)

    if findings and rnd < budget.max_rounds and stale == 0:
        step, usage = await follow_up(state, ctx)
        if usage:
            update["usage"] = usage
        if step is not None:
            return Command(goto="coordinator", update={**update, "plan": [step]})
    if findings:
        return Command(goto="writer", update={**update, "stop_reason": "finished", "stop_detail": ""})
    if rnd < budget.max_rounds:
        ctx.record(Replanning(round=rnd))
        return Command(goto="planner", update=update)
    return stop("budget_stop", f"no evidence found within {budget.max_rounds} round(s)")


BRIDGE_OPTIONS = 3  # names offered to the follow-up decision


async def follow_up(state: ResearchState, ctx: ResearchContext) -> tuple[PlanStep | None, dict | None]:
    """One more hop for a multi-hop question: search for the bridge entity the evidence names.

    The names come from the sentences read so far (the best-ranked names the question does not
    mention); the model chooses which one the answer depends on, under a grammar that offers only
    those names. Questions whose answer form is fixed (yes/no, "A or B") need no hop.
    """
    if answer_choices(state["question"]) is not None:
        return None, None
    made = {normalise(c["input"]) for c in state.get("tool_calls", []) if c["tool"] == "search"}
    sentences = read_sentences(state.get("sources", []), ctx.toolbox.source_text)
    ranked = rank_candidates(state["question"], sentences, k=BRIDGE_OPTIONS + len(made), kind="name", weights=BRIDGE_W)
    names = [c.text for c in ranked if normalise(c.text) not in made][:BRIDGE_OPTIONS]
    if not names:
        return None, None
    usage = None
    if len(names) == 1:
        bridge = names[0]
    else:
        findings = unique_findings(state.get("findings", []))[: ctx.settings.max_sources_in_prompt]
        try:
            out, usage = await ctx.ask_model(
                load_prompt("coordinator"), BridgeOut, bridge_schema(names), step="coordinator", max_tokens=32,
                question=state["question"], findings=render_findings(findings, ctx.settings.evidence_chars),
                names="\n".join(f"- {n}" for n in names),
            )
        except MalformedOutput:
            return None, None
        bridge = out.search
    plan = state.get("plan", [])
    step = PlanStep(id=max((s["id"] for s in plan), default=0) + 1, goal=f"find: {bridge}", tool="search",
                    query=bridge, done_when="the missing fact is found", status="pending", round=-1, bridge=bridge)
    ctx.record(BridgeChosen(search=bridge, options=names, step=step))
    return step, usage


def _round_of(step_id: int, plan: list) -> int:
    return next((s["round"] for s in plan if s["id"] == step_id), -1)
