"""Executor: a bounded tool loop for one plan step, returning findings (claim + verbatim quote + source).

Loop: make the planned call; read the new sources it surfaced (open + extract, in parallel); if no
relevant evidence yet and turns remain, ask the model for the next call (or "done").
"""

from __future__ import annotations

import asyncio
from typing import Any

from deepresearch.agent.prompts import load_prompt
from deepresearch.agent.reader import best_sentences, locate
from deepresearch.tools.base import Surfaced, Tool, ToolOutcome
from deepresearch.tools.untrusted import fence_untrusted
from langgraph.runtime import Runtime

from ..budget import call_record, call_signature, recorded_signature
from ..context import MalformedOutput, ResearchContext
from ..events import ActionNoted, ActionStarted, FindingMade, RepeatSkipped, StepFailed
from ..schemas import ExecutorAction, FindingOut, action_schema, finding_schema
from ..state import ExecutorTask, Finding, PlanStep, SourceRead, ToolCallRecord, Usage

SOURCES_PER_CALL = 4  # sources read (fetched in full) after each search: the answer's candidates come from them
EXTRACTED_PER_CALL = 2  # of those, the ones the extractor turns into findings (one LLM call each)
QUOTE_OPTIONS = 8  # sentences of a source offered as quotes
OPEN = "open"  # the tool that reads a surfaced source in full


def action_note(tool: Tool | None, outcome: ToolOutcome) -> str | None:
    """What progress shows about a call beyond its start: why it failed, or the tool's caveat."""
    if not outcome.ok:
        return f"failed: {' '.join(str(outcome.error).split())[:200]}"
    return tool.caveat(outcome.output or {}) if tool is not None else None


def observation(tool: Tool | None, name: str, value: str, outcome: ToolOutcome) -> str:
    """A short text of what a call returned, for the executor's next decision (the tool says how).
    Plain text: render_observations fences them all."""
    if not outcome.ok or tool is None:
        return f"{name}({value!r}) failed: " + " ".join(str(outcome.error).split())[:300]
    return tool.observe(value, outcome.output or {})


def render_observations(observations: list[str]) -> str:
    """The step's observations for the executor's prompt: one fence around them all. Every one can hold a
    stranger's string: an address from a search hit (in a call's input too), a title, a page's text, what a
    server answered; and a call's input was written by a model that had read them."""
    if not observations:
        return "(none)"
    return fence_untrusted("\n".join(observations), source="this step's tool calls")


def shown_goal(step: PlanStep) -> str:
    """A step's goal for a prompt. A follow-up step's goal names a span of a page (its bridge): fenced."""
    if step.get("bridge"):
        return fence_untrusted(step["goal"], source="a name found in the sources")
    return step["goal"]


def _rank_of(note: str, sources: list[Surfaced]) -> int:
    """The rank of the first source a note names (notes of parallel reads are kept in rank order)."""
    return next((rank for rank, s in enumerate(sources) if s.url in note), len(sources))


class StepRun:
    """Mutable bookkeeping of one executor run; turned into a state update at the end."""

    def __init__(self, task: ExecutorTask, ctx: ResearchContext):
        self.task, self.ctx, self.step = task, ctx, task["step"]
        self.usage: Usage = {"llm_tokens": 0, "llm_calls": 0, "tool_calls": 0}
        self.calls: list[ToolCallRecord] = []
        self.findings: list[Finding] = []
        self.sources: list[SourceRead] = []
        self.observations: list[str] = []
        self.errors: list[str] = []
        self.read: set[str] = set()

    def add_usage(self, u: Usage) -> None:
        for k in self.usage:
            self.usage[k] += u.get(k, 0)  # type: ignore[literal-required]

    def over_budget(self) -> bool:
        left = self.task["budget_left"]
        return self.usage["llm_tokens"] >= left["llm_tokens"] or self.usage["tool_calls"] >= left["tool_calls"]

    async def call(self, name: str, value: str) -> ToolOutcome | None:
        sig = call_signature(name, value)
        if sig in self.task["seen_calls"] or sig in {recorded_signature(c) for c in self.calls}:
            self.observations.append(f"{name}({value!r}) was already made in this run; not repeated")
            self.ctx.record(RepeatSkipped(step=self.step["id"], repeated=sig))
            return None
        if self.usage["tool_calls"] >= self.task["budget_left"]["tool_calls"]:
            self.observations.append(f"{name}({value!r}) not made: this step's tool-call budget is used up")
            return None
        self.ctx.record(ActionStarted(step=self.step["id"], tool=name, input=value))
        tool = self.ctx.toolbox.find(name)
        # An unknown tool (a server that ignored the grammar) gets its input as is: the toolbox refuses it.
        args = tool.args_from(value) if tool is not None else {"input": value}
        outcome = await self.ctx.use_tool(name, args, step=f"step-{self.step['id']}")
        if note := action_note(tool, outcome):
            self.ctx.record(ActionNoted(step=self.step["id"], tool=name, note=note))
        self.usage["tool_calls"] += 1
        self.calls.append(call_record(self.step["id"], name, value, outcome.ok))
        self.observations.append(observation(tool, name, value, outcome))
        return outcome

    def surfaced(self, name: str, outcome: ToolOutcome | None) -> list[Surfaced]:
        """The sources a call surfaced (the tool says which)."""
        tool = self.ctx.toolbox.find(name)
        if outcome is None or not outcome.ok or tool is None:
            return []
        return tool.sources(outcome.output or {})

    async def read_source(self, source: Surfaced, rank: int, extract: bool) -> tuple[SourceRead | None, Finding | None]:
        """Get the source's full text (opening it if needed); with `extract`, turn it into one finding.

        Returns what was read instead of appending it: sources are read in parallel, and the caller keeps
        them in rank order, so a run's findings (and the citation numbers they get) do not depend on which
        page arrived first."""
        url, title, doc_id, text = source.url, source.title, source.doc_id, source.text
        self.read.add(url)
        if text is None:
            page = next(iter(self.surfaced(OPEN, await self.call(OPEN, url))), None)
            if page is None:  # not opened, or no text in it
                return None, None
            text, title, doc_id = page.text or "", page.title or title, doc_id or page.doc_id
        read = SourceRead(step_id=self.step["id"], url=url, title=title, doc_id=doc_id, rank=rank,
                          hop=bool(self.step.get("bridge"))) if text else None
        if not extract:
            return read, None
        options = best_sentences(text, f"{self.task['question']} {self.step['goal']}", QUOTE_OPTIONS)
        if not options:
            return read, None
        # The title and the address are the page author's text too: the title goes inside the fence, the
        # address is not shown (`about` only tells parallel calls apart, for their seeds).
        shown = fence_untrusted(f"{title}\n\n{text}" if title else text, source="the source",
                                max_chars=self.ctx.settings.evidence_chars)
        try:
            out, usage = await self.ctx.ask_model(
                load_prompt("extractor"), FindingOut, finding_schema(options), step=f"step-{self.step['id']}",
                about=url, question=self.task["question"], goal=shown_goal(self.step), text=shown,
            )
        except MalformedOutput as exc:
            self.errors.append(f"step {self.step['id']}: {exc}")
            return read, None
        self.add_usage(usage)
        if not out.relevant:
            self.observations.append(f"{url}: not relevant")
            return read, None
        start, end = locate(out.quote, text) or (-1, -1)
        finding = Finding(step_id=self.step["id"], claim=out.quote, quote=out.quote, source=url, title=title,
                          doc_id=doc_id, start=start, end=end)
        return read, finding

    async def next_action(self) -> tuple[str, str] | None:
        schema = action_schema(self.ctx.toolbox.plannable())
        try:
            act, usage = await self.ctx.ask_model(
                load_prompt("executor"), ExecutorAction, schema, step=f"step-{self.step['id']}",
                question=self.task["question"], goal=shown_goal(self.step), done_when=self.step["done_when"],
                observations=render_observations(self.observations[-6:]),
            )
        except MalformedOutput as exc:
            self.errors.append(f"step {self.step['id']}: {exc}")
            return None
        self.add_usage(usage)
        return None if act.tool == "done" else (act.tool, act.input)

    async def run(self) -> None:
        action: tuple[str, str] | None = (self.step["tool"], self.step["query"])
        for turn in range(self.ctx.settings.budget.max_executor_turns):
            if turn > 0:
                if self.findings or self.over_budget():
                    break
                action = await self.next_action()
            if action is None or self.over_budget():
                break
            outcome = await self.call(*action)
            # Sources this step already read are not read again, unless the call brought their text itself.
            fresh = [s for s in self.surfaced(action[0], outcome) if s.text is not None or s.url not in self.read]
            reading, noted = fresh[:SOURCES_PER_CALL], len(self.observations)
            reads = await asyncio.gather(*(self.read_source(s, rank, rank < EXTRACTED_PER_CALL)
                                           for rank, s in enumerate(reading)))
            self.observations[noted:] = sorted(self.observations[noted:], key=lambda o: _rank_of(o, reading))
            for read, finding in reads:  # in rank order, whatever order the reads finished in
                if read is not None:
                    self.sources.append(read)
                if finding is not None:
                    self.findings.append(finding)
                    self.ctx.record(FindingMade(finding))


async def executor(task: ExecutorTask, runtime: Runtime[ResearchContext]) -> dict[str, Any]:
    run = StepRun(task, runtime.context)
    try:
        await run.run()
    except Exception as exc:  # one failing step must not crash the run; it is recorded instead
        run.errors.append(f"step {task['step']['id']}: {type(exc).__name__}: {exc}")
        runtime.context.record(StepFailed(step=task["step"]["id"], error=str(exc)))
    status = "done" if run.findings else "failed"
    step: PlanStep = {**task["step"], "status": status}
    return {"plan": [step], "findings": run.findings, "sources": run.sources, "tool_calls": run.calls,
            "usage": run.usage, "step_errors": run.errors}
