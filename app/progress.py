"""Live progress of a research run on stderr: the plan, each executor's current action, sources found,
and the token/time budget. Plain lines when stderr is not a terminal."""

from __future__ import annotations

import time
from typing import Any

from deepresearch.agent.config import BudgetSettings
from deepresearch.agent.graph.events import (
    ActionNoted,
    ActionStarted,
    BridgeChosen,
    CitationsChecked,
    FindingMade,
    HopSkipped,
    PlanMade,
    Replanning,
    RunEvent,
    StepsDispatched,
    Stopped,
    UsageReported,
)
from deepresearch.agent.graph.state import PlanStep
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text


class ResearchProgress:
    def __init__(self, console: Console, budget: BudgetSettings, quiet: bool = False):
        self.console = console
        self.budget = budget
        self.quiet = quiet
        self.started = time.time()
        self.steps: dict[int, dict[str, Any]] = {}
        self.current: dict[int, str] = {}
        self.sources: list[str] = []
        self.usage: dict[str, int] = {}
        self.notes: list[str] = []
        self.noted: set[tuple[str, str]] = set()
        self.live: Live | None = None

    def __enter__(self) -> ResearchProgress:
        if self.console.is_terminal and not self.quiet:
            self.live = Live(self._render(), console=self.console, refresh_per_second=4, transient=False)
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live:
            self.live.update(self._render())
            self.live.__exit__(None, None, None)

    def pause(self) -> None:
        """Stop redrawing (e.g. while the user edits the plan)."""
        if self.live:
            self.live.__exit__(None, None, None)
            self.live = None

    def __call__(self, event: RunEvent) -> None:
        match event:
            case PlanMade(steps=steps, replan=replan):
                self._plan(steps, replan)
            case BridgeChosen(step=step) if step is not None:
                self._plan([step], replan=True)
            case HopSkipped(answer=answer, confidence=confidence):
                self._line(f"no follow-up search: the sources read answer {answer!r} (confidence {confidence:.2f})")
            case StepsDispatched(round=rnd, steps=ids):
                for sid in ids:
                    self.steps.get(sid, {})["status"] = "running"
                self._line(f"round {rnd}: running steps {ids}")
            case ActionStarted(step=sid, tool=tool, input=value):
                self.current[sid] = f"{tool}({value[:60]!r})"
                self._line(f"  step {sid}: {self.current[sid]}")
            case ActionNoted(step=sid, tool=tool, note=note):
                if (tool, note) not in self.noted:  # the same caveat on every search is said once
                    self.noted.add((tool, note))
                    self._note(f"step {sid}: {tool} {note}")
            case FindingMade(finding=finding):
                self.sources.append(finding["title"] or finding["source"])
                self._line(f"  step {finding['step_id']}: evidence from {self.sources[-1]}")
            case UsageReported(usage=usage):
                self.usage = dict(usage)
            case Stopped(detail=detail):
                self._note(detail)
            case Replanning(round=rnd):
                self._note(f"re-planning after round {rnd}")
            case CitationsChecked(verified=verified, removed=removed):
                self._line(f"report written: {verified} verified citation(s), {removed} removed")
        if self.live:
            self.live.update(self._render())

    def _plan(self, steps: list[PlanStep], replan: bool) -> None:
        for s in steps:
            self.steps[s["id"]] = dict(s)
        self._line(("re-planned: " if replan else "plan: ")
                   + "; ".join(f"[{s['id']}] {s['tool']} {s['query']!r}" for s in steps))

    def _note(self, text: str) -> None:
        self.notes.append(text)
        self._line(f"  {text}")

    def _line(self, text: str) -> None:
        if not self.live and not self.quiet:
            self.console.print(Text(text, style="dim"))

    def _render(self) -> Group:
        table = Table("step", "tool", "query", "status / now", box=None, pad_edge=False)
        for sid, s in sorted(self.steps.items()):
            table.add_row(str(sid), s["tool"], s["query"][:50], self.current.get(sid, s.get("status", "")))
        b = self.budget
        used = self.usage
        status = Text(
            f"tokens {used.get('llm_tokens', 0)}/{b.max_llm_tokens} · tool calls {used.get('tool_calls', 0)}/"
            f"{b.max_tool_calls} · {time.time() - self.started:.0f}s/{b.max_wall_s:.0f}s · "
            f"sources {len(self.sources)}", style="cyan")
        parts: list[Any] = [table, status]
        parts += [Text(f"! {n}", style="yellow") for n in self.notes[-2:]]
        return Group(*parts)
