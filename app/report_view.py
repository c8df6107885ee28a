"""A run's report as structured parts (answer, a multi-hop answer's chain of cited steps, key points with their
citations, sources with quotes; for an open question's report its sections, each sentence with its citations, and
the sentences the check removed), read back from what the run stored: its answer, its citations and the markdown
the writer rendered.

The CLI's `--format html|pdf`, and later the API and the TUI, render from this one view.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Literal

from deepresearch.agent.graph.report.render import (
    EMPTY_SECTION,
    EXTRACTIVE_INTRO,
    FALLBACK_TAIL,
    REMOVED_HEADING,
    WRITTEN_INTRO,
)
from pydantic import BaseModel, Field

# The writer's markdown (agent/graph/nodes/writer.py render_report): "**Answer:** text [n]", "> note",
# "- point [n]", "- point _(unsupported: citation removed — reason)_", "- point".
_ANSWER = re.compile(r"^\*\*Answer:\*\* (?P<text>.*?)(?: \[(?P<n>\d+)\])?$")
# A multi-hop answer's chain under it (render.py chain_line): "**How:** quote [2] · quote [1]".
_HOW = re.compile(r"^\*\*How:\*\* (?P<steps>.*)$")
_STEP = re.compile(r"(?P<text>.+?) \[(?P<n>\d+)\](?: · |$)")  # a quote may hold " · " itself: split after a mark
_CITED = re.compile(r"^- (?P<text>.*) \[(?P<n>\d+)\]$")
_REMOVED = re.compile(r"^- (?P<text>.*) _\(unsupported: citation removed — (?P<reason>.*)\)_$")
# A sectioned report (agent/graph/report/render.py): "text [2][3]" (a written sentence, or "- quote [2]"), the count
# line under the intro, and "- text _(unsupported: reason)_" under "## Removed by the check".
_LINE = re.compile(r"^(?:- )?(?P<text>.*?) ?(?P<marks>(?:\[\d+\])+)$")
_COUNT = re.compile(r"^_(?:Removed by the check|Left out): (?P<n>\d+) ")
_DROPPED = re.compile(r"^- (?P<text>.*) _\(unsupported: (?P<reason>.*)\)_$")
STOPPED_EARLY = {"budget_stop": "This run stopped early (budget limit). The answer may be incomplete.",
                 "loop_stop": "This run stopped early (loop detected). The answer may be incomplete."}


class Point(BaseModel):
    text: str
    cite: int | None = None  # number of the verified source that supports it
    removed: str | None = None  # why its citation was removed (it failed the check)


class Sentence(BaseModel):
    """A line of a section (a written sentence, or a quote of an extractive report) and its check."""

    text: str
    cites: list[int] = Field(default_factory=list)  # the verified sources it rests on
    supported: bool = True
    reason: str | None = None  # why the check removed it


class Step(BaseModel):
    """A link of a multi-hop answer's chain: the quote and the number of the verified source it is from."""

    text: str
    cite: int | None = None


class Section(BaseModel):
    title: str
    sentences: list[Sentence] = Field(default_factory=list)


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
    chain: list[Step] = Field(default_factory=list)  # a multi-hop answer's cited steps, the bridge's quote first
    note: str = ""
    points: list[Point] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    removed: int = 0  # citations that failed the check
    style: Literal["answer", "extractive", "written"] = "answer"  # key points, or sections of quotes or sentences
    sections: list[Section] = Field(default_factory=list)
    dropped: int = 0  # sentences the check removed (written), quotes left out (extractive)
    fallback: str = ""  # why a written report gave way to the extractive one ("" when it did not)
    dropped_sentences: list[Sentence] = Field(default_factory=list)  # the removed sentences, with why
    markdown: str = ""  # the report as the writer rendered it


def report_view(*, run_id: str, question: str, status: str, answer: str | None, report: str | None,
                citations: list[dict[str, Any]], created_at: datetime | None = None) -> ReportView:
    verified = {int(c["n"]): c for c in citations if c.get("verified") and isinstance(c.get("n"), int)}
    view = ReportView(run_id=run_id, question=question, status=status, created_at=created_at, answer=answer or "",
                      markdown=report or "", removed=sum(1 for c in citations if not c.get("verified")))
    part = ""  # "" before any heading, else the heading the line stands under
    for line in (report or "").splitlines():
        if line.startswith("## "):
            part = line[3:].strip()
            if view.style != "answer" and part not in ("Sources", REMOVED_HEADING):
                view.sections.append(Section(title=part))
            continue
        if part:
            _section_line(view, part, line, verified)
            continue
        if line in (WRITTEN_INTRO, EXTRACTIVE_INTRO):
            view.style = "written" if line == WRITTEN_INTRO else "extractive"
        elif line.startswith("_") and line.endswith(FALLBACK_TAIL):
            view.style, view.fallback = "extractive", line[1:-len(FALLBACK_TAIL)].removesuffix(", ")
        elif m := _HOW.match(line):
            view.chain = [Step(text=step["text"], cite=int(step["n"]) if int(step["n"]) in verified else None)
                          for step in _STEP.finditer(m["steps"])]
        elif m := _COUNT.match(line):
            view.dropped = int(m["n"])
        elif m := _ANSWER.match(line):
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


def _section_line(view: ReportView, part: str, line: str, verified: dict[int, Any]) -> None:
    if part == "Sources" or not line.strip() or line == EMPTY_SECTION:
        return
    if part == REMOVED_HEADING:
        if m := _DROPPED.match(line):
            view.dropped_sentences.append(Sentence(text=m["text"], supported=False, reason=m["reason"]))
        return
    if not view.sections:
        return
    m = _LINE.match(line)
    cites = [int(n) for n in re.findall(r"\d+", m["marks"]) if int(n) in verified] if m else []
    view.sections[-1].sentences.append(Sentence(text=m["text"] if m else line.removeprefix("- "), cites=cites,
                                                supported=bool(cites)))


SECTION_FIELDS = {"style", "sections", "dropped", "dropped_sentences"}


def sections_of(result: Any) -> dict[str, Any]:
    """A run result's report structure (style, sections with each sentence's check, the sentences removed), for
    `ask --json` and the MCP research tool."""
    view = report_view(run_id=result.run_id, question="", status=result.status, answer=result.answer,
                       report=result.report, citations=result.citations)
    return view.model_dump(mode="json", include=SECTION_FIELDS)


def view_of_run(run: Any) -> ReportView:
    """From a stored run (trace store RunRecord)."""
    return report_view(run_id=run.id, question=run.question, status=run.status, answer=run.answer,
                       report=run.report, citations=run.citations, created_at=run.created_at)

