"""Plan approval: the run pauses (LangGraph `interrupt`) until the user accepts, edits or rejects the plan.

The decision the run resumes with: {"action": "accept"} | {"action": "reject"} |
{"action": "edit", "steps": [{goal, tool, query, done_when?}]}.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from ..context import ResearchContext
from ..events import PlanEdited, PlanReviewed
from ..state import PlanStep, ResearchState


def apply_edit(pending: list[PlanStep], edited: list[dict[str, Any]], tools: list[str]) -> list[PlanStep]:
    first_id = min((s["id"] for s in pending), default=1)
    steps = []
    for i, raw in enumerate(edited):
        tool = raw.get("tool", "search")
        if tool not in tools:
            raise ValueError(f"step {i + 1}: unknown tool '{tool}' (choose from {', '.join(tools)})")
        if not str(raw.get("query", "")).strip():
            raise ValueError(f"step {i + 1}: empty query")
        steps.append(PlanStep(id=first_id + i, goal=str(raw.get("goal") or raw["query"]), tool=tool,
                              query=str(raw["query"]), done_when=str(raw.get("done_when", "")),
                              status="pending", round=-1))
    if not steps:
        raise ValueError("an edited plan needs at least one step")
    return steps


async def approve_plan(state: ResearchState, runtime: Runtime[ResearchContext]) -> Command[
    Literal["coordinator", "__end__"]
]:
    ctx = runtime.context
    pending = [s for s in state.get("plan", []) if s["status"] == "pending"]
    decision = interrupt({"plan": pending})
    action = (decision or {}).get("action", "accept")
    ctx.record(PlanReviewed(decision))
    if action == "reject":
        return Command(goto="__end__", update={"stop_reason": "rejected", "stop_detail": "plan rejected by the user"})
    if action == "edit":
        steps = apply_edit(pending, decision.get("steps", []), ctx.toolbox.names())
        # Drop the old pending steps (same ids are replaced; extra old ids are skipped).
        skipped = [{**s, "status": "skipped"} for s in pending if s["id"] >= steps[0]["id"] + len(steps)]
        ctx.record(PlanEdited(steps))
        return Command(goto="coordinator", update={"plan": steps + skipped})
    return Command(goto="coordinator")
