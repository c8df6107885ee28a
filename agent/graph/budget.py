"""Budgets (steps, tokens, tool calls, wall time) and loop detection, as pure functions of state."""

from __future__ import annotations

import time

from deepresearch.agent.config import BudgetSettings
from deepresearch.agent.reader import normalise

from .state import ResearchState, ToolCallRecord, Usage


def usage_of(state: ResearchState) -> Usage:
    return state.get("usage") or {"llm_tokens": 0, "llm_calls": 0, "tool_calls": 0}


def exhausted(state: ResearchState, budget: BudgetSettings, now: float | None = None) -> str | None:
    """The budget that ran out, said plainly, or None."""
    used = usage_of(state)
    if used["llm_tokens"] >= budget.max_llm_tokens:
        return f"LLM token budget reached ({used['llm_tokens']} of {budget.max_llm_tokens})"
    if used["tool_calls"] >= budget.max_tool_calls:
        return f"tool-call budget reached ({used['tool_calls']} of {budget.max_tool_calls})"
    elapsed = (now or time.time()) - state.get("started_at", now or time.time())
    if elapsed >= budget.max_wall_s:
        return f"time budget reached ({elapsed:.0f}s of {budget.max_wall_s:.0f}s)"
    return None


def share(state: ResearchState, budget: BudgetSettings, parts: int) -> Usage:
    """What is left of the run's budget, split evenly among `parts` parallel executors."""
    used = usage_of(state)
    parts = max(parts, 1)
    return {
        "llm_tokens": max(budget.max_llm_tokens - used["llm_tokens"], 0) // parts,
        "llm_calls": 1_000_000,
        "tool_calls": max((budget.max_tool_calls - used["tool_calls"]) // parts, 1),
    }


def call_signature(tool: str, value: str) -> str:
    """Two calls with the same tool and the same normalised input are the same call."""
    return _signature(tool, normalise(value))


def call_record(step_id: int, tool: str, value: str, ok: bool) -> ToolCallRecord:
    """A call as the state keeps it: its input normalised, so its signature can be rebuilt."""
    return ToolCallRecord(step_id=step_id, tool=tool, input=normalise(value), ok=ok)


def recorded_signature(call: ToolCallRecord) -> str:
    return _signature(call["tool"], call["input"])


def _signature(tool: str, normalised: str) -> str:
    return f"{tool}:{normalised}"
