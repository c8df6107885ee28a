"""What the TUI shows as text: one log line per progress event, a report as markdown (sources as a list),
and a plan as editable lines ("tool: query") read back into the decision the graph resumes with."""

from __future__ import annotations

import re
from typing import Any

from deepresearch.agent.graph.events import (
    ActionNoted,
    ActionStarted,
    BridgeChosen,
    CitationsChecked,
    FindingMade,
    HopSkipped,
    PlanMade,
    RunEvent,
    Stopped,
)
from deepresearch.agent.graph.state import PlanStep
from pydantic import ValidationError
from rich.markup import escape

from ..report_view import ReportView
from ..service.runs import EditedStep, PlanDecision

# "tool: query" — the tool is one lowercase word followed by ": ", so a URL ("https://…") or a query with
# a colon after several words ("Ada Lovelace: birth year") stays a query for the default tool.
_TOOL_LINE = re.compile(r"^(?P<tool>[a-z_]+):(?:\s+(?P<query>.*))?$")


def describe(event: RunEvent) -> str | None:
    """One log line (Rich markup) per progress event; model text is escaped so "[x]" is not markup."""
    match event:
        case PlanMade(steps=steps, replan=replan):
            return _plan_line(steps, replan)
        case BridgeChosen(step=step) if step is not None:
            return _plan_line([step], replan=True)
        case HopSkipped(answer=answer, confidence=confidence):
            return f"no follow-up search: the sources read answer {escape(repr(answer))} (confidence {confidence:.2f})"
        case ActionStarted(step=sid, tool=tool, input=value):
            return f"  step {sid}: {tool}({escape(repr(value[:60]))})"
        case ActionNoted(step=sid, tool=tool, note=note):
            return f"  [yellow]step {sid}: {tool} {escape(note)}[/yellow]"
        case FindingMade(finding=finding):
            return f"  [green]evidence[/green] from {escape(finding['title'] or finding['source'])}"
        case Stopped(detail=detail):
            return f"[yellow]{escape(detail)}[/yellow]"
        case CitationsChecked(verified=verified, removed=removed):
            return f"[b]report[/b]: {verified} verified citation(s), {removed} removed"
    return None


def _plan_line(steps: list[PlanStep], replan: bool) -> str:
    head = "re-planned" if replan else "plan"
    return f"[b]{head}[/b]: " + "; ".join(escape(f"{s['tool']} {s['query']!r}") for s in steps)


def report_markdown(view: ReportView) -> str:
    """The report for the report pane. The writer's markdown puts each source on its own line without
    blank lines between them, which Markdown joins into one run-on paragraph; here each source is a list
    item with its quote beneath it."""
    if view.style != "answer" or (not view.answer and not view.points):  # sections: the writer's markdown as it is
        return view.markdown or f"_{view.status}: no report_"
    mark = f" [{view.answer_cite}]" if view.answer_cite else ""
    lines = [f"# {view.question}", "", f"**Answer:** {view.answer}{mark}", ""]
    if view.chain:  # a multi-hop answer's cited steps, as the writer's markdown has them
        lines += ["**How:** " + " · ".join(f"{s.text} [{s.cite}]" if s.cite else s.text for s in view.chain), ""]
    if view.note:
        lines += [f"> {view.note}", ""]
    for point in view.points:
        if point.cite:
            lines.append(f"- {point.text} [{point.cite}]")
        elif point.removed:
            lines.append(f"- {point.text} _(unsupported: citation removed — {point.removed})_")
        else:
            lines.append(f"- {point.text}")
    if view.sources:
        lines += ["", "## Sources", ""]
        for source in view.sources:
            title = source.title or source.url
            lines.append(f"- **[{source.n}]** {title} — {source.url}")
            if source.quote:
                lines.append(f"  > {source.quote}")
    if view.removed:
        lines += ["", f"_{view.removed} citation(s) failed the check and were removed._"]
    return "\n".join(lines) + "\n"


def plan_text(plan: list[dict[str, Any]]) -> str:
    """The proposed plan as the lines the review dialog edits."""
    return "\n".join(f"{step['tool']}: {step['query']}" for step in plan)


def plan_decision(text: str, proposed: list[dict[str, Any]]) -> PlanDecision:
    """The review dialog's text as the service's PlanDecision: unchanged text accepts the plan as proposed,
    anything else is an edit. Raises ValueError with one line for a plan that cannot be a plan."""
    if text.strip() == plan_text(proposed).strip():
        return PlanDecision(action="accept")
    steps: list[EditedStep] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        m = _TOOL_LINE.match(line)
        tool, query = (m["tool"], (m["query"] or "").strip()) if m else ("search", line)
        if not query:
            raise ValueError(f"step {len(steps) + 1}: '{tool}:' has no query after it")
        steps.append(EditedStep(query=query, tool=tool))
    try:
        return PlanDecision(action="edit", steps=steps)
    except ValidationError as exc:  # pydantic's message spans lines; the dialog shows one
        raise ValueError(str(exc.errors()[0]["msg"]).removeprefix("Value error, ")) from None
