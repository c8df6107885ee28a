"""The extractive report: for an open question on a model that does not write (the embedded 135M), the findings
grouped under what was searched for them (the plan's steps, in plan order), each a quote that was found in its
source and is about the question or its search (relevance.py). No sentence of the model's own: every line is a
source's, so the check of a line is the check of its citation."""

from __future__ import annotations

from collections.abc import Callable

from ..state import Finding, PlanStep
from .lines import ReportSection
from .sentence_check import check_line

QUESTION_SECTION = "Search: the question"
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
