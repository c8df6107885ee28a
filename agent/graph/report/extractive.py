"""The extractive report: for an open question on a model that does not write (the embedded 135M), the findings
grouped under what was searched for them (the plan's steps, in plan order), each a quote that was found in its
source and is about the question or its search (relevance.py). No sentence of the model's own: every line is a
source's, so the check of a line is the check of its citation. Besides the extractor's picks, the reader's own: the
units of the sources read that cover the most of the question (or of a step's search), since a small model's picks
are often not about it while a table row that is stands unread (`reader_findings`)."""

from __future__ import annotations

from collections.abc import Callable

from deepresearch.agent.reader import RelevanceReader

from ..findings import unique_findings
from ..state import Finding, PlanStep, SourceRead
from .lines import ReportSection
from .relevance import FindingRelevance
from .sentence_check import check_line

QUESTION_SECTION = "Search: the question"
# A unit the reader picks on its own (no model judged it) must cover at least half of the question's weight, not
# only the quarter that makes a quote "about" it (reader ABOUT); for a step's search (a thing the question compares,
# a name) all of it: "Berkeley, California" is not about "University of California, Berkeley".
READER_PICK_COVERAGE = 0.5
STEP_PICK_COVERAGE = 1.0 - 1e-9  # all of it, up to rounding
OTHER_SECTION = "Other sources"


def section_title(step: PlanStep | None, question: str) -> str:
    if step is None:
        return OTHER_SECTION
    if " ".join(step["query"].split()).lower() == " ".join(question.split()).lower():
        return QUESTION_SECTION
    return f"Search: {' '.join(step['query'].split())}"


def extractive_sections(question: str, findings: list[Finding], plan: list[PlanStep],
                        source_text: Callable[[str], str | None], about: Callable[[Finding], bool],
                        per_section: int) -> list[ReportSection]:
    """One section per step with findings, in plan order; at most `per_section` quotes shown under each (the ones
    first found). Lines that fail the check stay in the section, not shown, for the count and the trace."""
    steps = {s["id"]: s for s in plan}
    sections: dict[str, ReportSection] = {}
    order = {s["id"]: i for i, s in enumerate(plan)}
    for i in sorted(range(len(findings)), key=lambda i: order.get(findings[i]["step_id"], len(order))):
        title = section_title(steps.get(findings[i]["step_id"]), question)
        section = sections.setdefault(title, ReportSection(title))
        if len(section.shown) >= per_section:
            continue
        section.lines.append(check_line(findings[i]["quote"], [i], findings, source_text, about))
    return list(sections.values())


def reader_findings(reader: RelevanceReader, about: FindingRelevance, sources: list[SourceRead],
                    source_text: Callable[[str], str | None], k: int) -> list[Finding]:
    """The units the reader finds most about the question (one per source, k of them) and about each step's own
    search, as findings of the step that fetched their source; only those that pass the report's check."""
    step_of: dict[str, int] = {}
    for source in sources:
        step_of.setdefault(source["url"], source["step_id"])
    picks = [(step_of.get(u.url, -1), u) for u, score in reader.closest(k) if score >= READER_PICK_COVERAGE]
    for step_id, (_, step_reader) in about.steps.items():
        picks += [(step_id, u) for u, score in step_reader.closest(k) if score >= STEP_PICK_COVERAGE]
    found = unique_findings([Finding(step_id=step_id, claim=unit.text, quote=unit.text, source=unit.url,
                                     title=unit.title, doc_id=None, start=-1, end=-1) for step_id, unit in picks])
    return [f for f in found if check_line(f["quote"], [0], [f], source_text, about).supported]
