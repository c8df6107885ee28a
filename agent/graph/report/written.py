"""The written report, for a model that writes (a served model; agent.report.style): an outline of the findings,
then each section written from its own findings, every sentence with the numbers of the findings it rests on.

The model sees only findings that passed their own check (quote in its source, about the question or its
search), numbered: the extractor's picks and the reader's own best units, the findings the extractive report
quotes (compose.py). The grammar holds each sentence's citations to its section's findings (schemas.py). Then
every sentence is checked against the quotes it cites (sentence_check.py): what fails is removed and counted.
Sections are written in parallel (the embedded engine and vLLM batch them). A report with no sentence left to
show gives way to the extractive one, whose intro line says why (compose.py `written_fallback`).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

from deepresearch.agent.prompts import load_prompt
from deepresearch.tools.untrusted import fence_untrusted

from ..context import MalformedOutput, ResearchContext
from ..state import Finding, Usage, add_usage
from .lines import ReportSection
from .schemas import OutlineOut, SectionOut, outline_schema, section_schema
from .sentence_check import check_line, finding_problem

# Headings the rendered report uses itself (render.py): a section may not take one of them as its title.
RESERVED_TITLES = frozenset({"sources", "removed by the check"})


def clean_text(text: str) -> str:
    """One line of plain text: no line breaks, no brackets (a "[3]" of the model's own would read as a citation),
    nothing at its start that makes a markdown heading, quote or list item."""
    text = re.sub(r"[\[\]]", "", " ".join(text.split()))
    return text.lstrip("#>*-+ ").strip()


def numbered(pairs: list[tuple[int, Finding]], chars: int) -> str:
    """Findings as the model sees them, with the numbers it cites them by; quotes and titles are the pages' text."""
    lines = "\n".join(f"[{n}] \"{f['quote'][:chars]}\" ({f['title']})" for n, f in pairs)
    return fence_untrusted(lines, source="the sources read in this run")


class WrittenReport:
    """One written report: `sections` (None when the outline failed or no section could be written: the caller
    falls back to the extractive report, as it does when no section has a sentence the check kept), how many
    findings the model was shown, the usage of its calls and the errors it met."""

    def __init__(self) -> None:
        self.sections: list[ReportSection] | None = None
        self.findings = 0
        self.usage: Usage | None = None
        self.errors: list[str] = []

    def add(self, usage: Usage) -> None:
        self.usage = add_usage(self.usage, usage)


async def write_report(ctx: ResearchContext, question: str, findings: list[Finding],
                       source_text: Callable[[str], str | None], about: Callable[[Finding], bool]) -> WrittenReport:
    settings, out = ctx.settings.report, WrittenReport()
    shown = [i for i, f in enumerate(findings) if not finding_problem(f, source_text, about(f))][: settings.findings]
    out.findings = len(shown)
    if not shown:
        return out
    chars = ctx.settings.evidence_chars
    try:
        outline, usage = await ctx.ask_model(
            load_prompt("outliner"), OutlineOut, outline_schema(len(shown), settings.sections), step="report",
            question=question, findings=numbered([(n, findings[i]) for n, i in enumerate(shown, 1)], chars))
        out.add(usage)
    except MalformedOutput as exc:
        out.errors.append(f"report outline: {exc}; the report quotes the findings instead")
        return out
    plan: list[tuple[str, list[int]]] = []
    for section in outline.sections[: settings.sections]:
        title = clean_text(section.title)[:80] or "Findings"
        if title.lower() in RESERVED_TITLES or title.lower() in (t.lower() for t, _ in plan):
            continue
        numbers = sorted({n for n in section.findings if 1 <= n <= len(shown)})
        if numbers:
            plan.append((title, numbers))

    async def write(k: int, title: str, numbers: list[int]) -> ReportSection | None:
        try:
            written, usage = await ctx.ask_model(
                load_prompt("reporter"), SectionOut, section_schema(numbers, settings.sentences), step="report",
                about=str(k), question=question, title=title,
                findings=numbered([(n, findings[shown[n - 1]]) for n in numbers], chars))
        except MalformedOutput as exc:
            out.errors.append(f"report section {title!r}: {exc}")
            return None
        out.add(usage)
        section = ReportSection(title)
        for sentence in written.sentences[: settings.sentences]:
            cites = [shown[n - 1] for n in sentence.cites if n in numbers]
            section.lines.append(check_line(clean_text(sentence.text), cites, findings, source_text, about))
        return section

    done = await asyncio.gather(*(write(k, title, numbers) for k, (title, numbers) in enumerate(plan)))
    sections = [s for s in done if s is not None]
    out.sections = sections or None
    return out
