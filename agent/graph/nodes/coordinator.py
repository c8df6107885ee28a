"""Coordinator: close the round that ran, then route — dispatch ready steps in parallel, make one more
hop, re-plan, write, or stop early.

The decision is rule-based on purpose: budgets, loop detection and "did this round add evidence"
are facts of the state, and a small policy model should not be trusted to enforce its own limits.
`decide` is that rule, a pure function of the state; the node only records and applies it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from deepresearch.agent.config import BudgetSettings
from langgraph.runtime import Runtime
from langgraph.types import Command, Send

from ..budget import exhausted, recorded_signature, share, usage_of
from ..context import ResearchContext
from ..events import Replanning, StepsDispatched, Stopped, UsageReported
from ..state import ExecutorTask, PlanStep, ResearchState, StopReason

Route = Literal["executor", "follow_up", "planner", "writer"]


@dataclass(frozen=True)
class Stop:
    """End the run early (the writer still reports what was found, and says why it stopped)."""

    reason: StopReason
    detail: str


def pending_steps(state: ResearchState) -> list[PlanStep]:
    return [s for s in state.get("plan", []) if s["status"] == "pending"]


def stale_after_round(state: ResearchState) -> int | None:
    """Rounds in a row without new evidence, counting the round that just ran; None while there is none
    to close (before the first round, or with steps still to dispatch)."""
    rnd, plan = state.get("round", 0), state.get("plan", [])
    if rnd == 0 or pending_steps(state):
        return None
    new = [f for f in state.get("findings", []) if _round_of(f["step_id"], plan) == rnd]
    return 0 if new else state.get("stale_rounds", 0) + 1


def decide(state: ResearchState, budget: BudgetSettings, stale: int) -> Route | Stop:
    """Where the run goes next: stop on a spent budget or a loop; dispatch pending steps while rounds
    are left; after a round that found evidence, one more hop while rounds are left, else write; with
    no evidence, re-plan while rounds are left."""
    rnd = state.get("round", 0)
    if reason := exhausted(state, budget):
        return Stop("budget_stop", reason)
    if stale >= budget.loop_window and rnd >= budget.loop_window:
        return Stop("loop_stop", f"no new evidence in {stale} round(s) in a row")
    rounds_left = rnd < budget.max_rounds  # the one test of the round budget
    if pending_steps(state):
        return "executor" if rounds_left else Stop("budget_stop",
                                                   f"round budget reached ({rnd} of {budget.max_rounds})")
    if state.get("findings"):
        return "follow_up" if rounds_left and stale == 0 else "writer"
    return "planner" if rounds_left else Stop("budget_stop", f"no evidence found within {budget.max_rounds} round(s)")


def dispatch(state: ResearchState, budget: BudgetSettings) -> tuple[list[Send], list[PlanStep]]:
    """One executor per pending step, each with an even share of what is left of the budget."""
    pending = pending_steps(state)
    rnd = state.get("round", 0)
    left = share(state, budget, len(pending))
    seen = [recorded_signature(c) for c in state.get("tool_calls", [])]
    dispatched = [PlanStep(**{**s, "status": "running", "round": rnd + 1}) for s in pending]
    sends = [Send("executor", ExecutorTask(question=state["question"], step=s, seen_calls=seen, budget_left=left))
             for s in dispatched]
    return sends, dispatched


async def coordinator(state: ResearchState, runtime: Runtime[ResearchContext]) -> Command[Route]:
    ctx = runtime.context
    budget = ctx.settings.budget
    rnd = state.get("round", 0)
    update: dict = {}
    stale = state.get("stale_rounds", 0)
    if (closed := stale_after_round(state)) is not None:
        stale = update["stale_rounds"] = closed
    ctx.record(UsageReported(usage=usage_of(state), round=rnd, findings=len(state.get("findings", []))))

    move = decide(state, budget, stale)
    if isinstance(move, Stop):
        ctx.record(Stopped(move.reason, move.detail))
        return Command(goto="writer", update={**update, "stop_reason": move.reason, "stop_detail": move.detail})
    if move == "executor":
        sends, dispatched = dispatch(state, budget)
        ctx.record(StepsDispatched(round=rnd + 1, steps=[s["id"] for s in dispatched]))
        return Command(goto=sends, update={**update, "plan": dispatched, "round": rnd + 1})
    if move == "writer":
        return Command(goto="writer", update={**update, "stop_reason": "finished", "stop_detail": ""})
    if move == "planner":
        ctx.record(Replanning(round=rnd))
    return Command(goto=move, update=update)


def _round_of(step_id: int, plan: list[PlanStep]) -> int:
    return next((s["round"] for s in plan if s["id"] == step_id), -1)
