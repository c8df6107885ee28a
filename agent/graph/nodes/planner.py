"""Planner: question (+ recalled memory) → ordered steps; also re-plans when a round found nothing."""

from __future__ import annotations

import re
from typing import Literal

from deepresearch.agent.prompts import load_prompt
from deepresearch.agent.reader import ABOUT, texts_about
from deepresearch.tools.untrusted import fence_untrusted
from langgraph.runtime import Runtime
from langgraph.types import Command

from ..context import MalformedOutput, ResearchContext
from ..events import PlanMade
from ..schemas import PlanOut, plan_schema
from ..state import PlanStep, ResearchState

MEMORY_NOTES, NOTE_CHARS = 3, 300  # notes from earlier research shown to the planner, and their length


async def recall_memory(ctx: ResearchContext, question: str) -> list[str]:
    """Notes from earlier runs (and the user's files) that look related to this question: what the tools
    that run before planning (memory recall) found for it."""
    notes: list[str] = []
    for name in ctx.toolbox.names():
        tool = ctx.toolbox.find(name)
        if tool is None or not tool.before_planning:
            continue
        outcome = await ctx.use_tool(name, tool.args_from(question), step="planner")
        if outcome.ok and outcome.output:
            notes += tool.notes(outcome.output)
    return [n[:NOTE_CHARS] for n in notes if n]


def about_the_question(question: str, notes: list[str]) -> list[str]:
    """The recalled notes that are about this question (relevance.py): a note recalled for sounding alike but
    about something else (another run's cheese cooperative for a question on a playwright) stays out."""
    return texts_about(question, notes, ABOUT)


def copied_from_notes(query: str, question: str, notes: list[str]) -> bool:
    """A planned query or URL taken from a recalled note rather than from the question: a note is context for
    planning, never a search to run or a page to open (the 135M model copies what it is shown)."""
    text = " ".join(query.split()).lower()
    if len(text.split()) >= 3 and text not in question.lower() and any(
            f" {text} " in f" {' '.join(n.split()).lower()} " for n in notes):
        return True
    own = _words(query) - _words(question)
    return bool(own) and any(len(own & _words(n)) >= max(2, (2 * len(own) + 2) // 3) for n in notes)


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) > 3}


def fallback_plan(question: str, first_id: int) -> list[PlanStep]:
    return [PlanStep(id=first_id, goal="find sources that answer the question", tool="search",
                     query=question[:200], done_when="a source states the answer", status="pending", round=-1)]


def replan_feedback(old_steps: list[PlanStep]) -> str:
    """The steps tried, for a new plan. A follow-up step's query is a span of a page (its bridge): fenced."""
    tried = "; ".join(f"{s['tool']} '{s['query']}'" for s in old_steps)
    return ("\nThese steps found no useful evidence, so plan different ones:\n"
            + fence_untrusted(tried, source="the steps tried") + "\n")


async def planner(state: ResearchState, runtime: Runtime[ResearchContext]) -> Command[
    Literal["approve_plan", "coordinator"]
]:
    ctx = runtime.context
    question = state["question"]
    old_steps = state.get("plan") or []
    replanning = bool(old_steps)
    update: dict = {}
    memory, recalled = state.get("memory"), []
    if memory is None:
        recalled = await recall_memory(ctx, question)
        memory = about_the_question(question, recalled)[:MEMORY_NOTES]
        update["memory"] = memory
    tools = ctx.toolbox.plannable() or ["search"]
    feedback = replan_feedback(old_steps) if replanning else ""
    # Memories are findings quoted from pages by earlier runs, and passages of files: untrusted text.
    memory_text = ("\nNotes from earlier research:\n" + fence_untrusted(
        "\n".join(f"- {m}" for m in memory), source="earlier research and your files") + "\n") if memory else ""
    first_id = max((s["id"] for s in old_steps), default=0) + 1
    max_steps = ctx.settings.budget.max_plan_steps
    steps: list[PlanStep] = []
    try:
        plan, usage = await ctx.ask_model(
            load_prompt("planner"), PlanOut, plan_schema(tools, max_steps), step="planner",
            question=question, max_steps=max_steps, memory=memory_text, feedback=feedback,
        )
        # One step per distinct query: the question is searched anyway, and a repeated query (a small
        # model often plans the same search twice) would run twice in the same round.
        seen = {" ".join(question.split()).lower()}
        planned = []
        for s in plan.steps:
            key = " ".join(s.query.split()).lower()
            if key not in seen and not copied_from_notes(s.query, question, recalled or memory):
                seen.add(key)
                planned.append(s)
        steps = [
            PlanStep(id=first_id + i, goal=s.goal or f"{s.tool}: {s.query}", tool=s.tool, query=s.query,
                     done_when=s.done_when or "a source answers it", status="pending", round=-1)
            for i, s in enumerate(planned)
        ]
        update["usage"] = usage
    except MalformedOutput as exc:
        update["step_errors"] = [f"planner: {exc}; searching the question itself"]
    if not replanning:
        # The retrieval floor: one search for the question itself always comes first, on top of the planned
        # steps (it finds a gold document for most questions; a small model's own queries often do not).
        steps = [*fallback_plan(question, first_id), *steps[:max_steps]]
        steps = [{**s, "id": first_id + i} for i, s in enumerate(steps)]
    elif not steps:
        steps = fallback_plan(question, first_id)
    ctx.record(PlanMade(steps, replan=replanning))
    update.update(plan=steps, plan_version=state.get("plan_version", 0) + 1)
    goto = "coordinator" if (ctx.settings.auto_approve or replanning) else "approve_plan"
    return Command(goto=goto, update=update)
