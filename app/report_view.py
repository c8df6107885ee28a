"""A run's report as structured parts (answer, key points with their citations, sources with quotes),
read back from what the run stored: its answer, its citations and the markdown the writer rendered.

The CLI's `--format html|pdf`, and later the API and the TUI, render from this one view.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

# The writer's markdown (agent/graph/nodes/writer.py render_report): "**Answer:** text [n]", "> note",
# "- point [n]", "- point _(unsupported: citation removed — reason)_", "- point".
_ANSWER = re.compile(r"^\*\*Answer:\*\* (?P<text>.*?)(?: \[(?P<n>\d+)\])?$")
_CITED = re.compile(r"^- (?P<text>.*) \[(?P<n>\d+)\]$")
_REMOVED = re.compile(r"^- (?P<text>.*) _\(unsupported: citation removed — (?P<reason>.*)\)_$")
STOPPED_EARLY = {"budget_stop": "This run stopped early (budget limit). The answer may be incomplete.",
                 "loop_stop": "This run stopped early (loop detected). The answer may be incomplete."}


class Point(BaseModel):
    text: str
    cite: int | None = None  # number of the verified source that supports it
    removed: str | None = None  # why its citation was removed (it failed the check)


class Source(BaseModel):
    n: int
    title: str
    url: str
    quote: str


class ReportView(BaseModel):
    run_id: str
    question: str
    status: str
    created_at: datetime | None = None
    answer: str = ""
    answer_cite: int | None = None
    note: str = ""
    points: list[Point] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    removed: int = 0  # citations that failed the check
    markdown: str = ""  # the report as the writer rendered it


def report_view(*, run_id: str, question: str, status: str, answer: str | None, report: str | None,
                citations: list[dict[str, Any]], created_at: datetime | None = None) -> ReportView:
    verified = {int(c["n"]): c for c in citations if c.get("verified") and isinstance(c.get("n"), int)}
    view = ReportView(run_id=run_id, question=question, status=status, created_at=created_at, answer=answer or "",
                      markdown=report or "", removed=sum(1 for c in citations if not c.get("verified")))
    in_sources = False
    for line in (report or "").splitlines():
        if line.startswith("## "):
            in_sources = True
        if in_sources:
            continue
        if m := _ANSWER.match(line):
            view.answer = view.answer or m["text"]
            view.answer_cite = int(m["n"]) if m["n"] and int(m["n"]) in verified else None
        elif line.startswith("> "):
            view.note = " ".join(filter(None, [view.note, line[2:].strip()]))
        elif m := _REMOVED.match(line):
            view.points.append(Point(text=m["text"], removed=m["reason"]))
        elif (m := _CITED.match(line)) and int(m["n"]) in verified:
            view.points.append(Point(text=m["text"], cite=int(m["n"])))
        elif line.startswith("- "):
            view.points.append(Point(text=line[2:]))
    view.note = view.note or STOPPED_EARLY.get(status, "")
    view.sources = [Source(n=n, title=str(c.get("title") or ""), url=str(c.get("source") or ""),
                           quote=str(c.get("quote") or "")) for n, c in sorted(verified.items())]
    return view


def view_of_run(run: Any) -> ReportView:
    """From a stored run (trace store RunRecord)."""
    return report_view(run_id=run.id, question=run.question, status=run.status, answer=run.answer,
                       report=run.report, citations=run.citations, created_at=run.created_at)

