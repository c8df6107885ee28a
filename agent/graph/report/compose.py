"""The sectioned report (extractive or written, shape.py) put together: the direct answer on top when there is
one, the sections, the citations numbered in order of first use (the answer's first), the events, the markdown.

Every cited finding of every line becomes a citation: verified when its line is shown and the finding passed its
own check, else not, with the reason. So `citations` counts as it does for key points: a report's verified
citations are the ones a reader sees.
"""

from __future__ import annotations

from dataclasses import dataclass

from deepresearch.agent.reader import NOT_FOUND, RelevanceReader, normalise

from ..context import ResearchContext
from ..events import CitationsChecked
from ..findings import unique_findings
from ..judgement import NOTHING_TO_REPORT, AnswerJudgement, render_not_found
from ..state import Citation, Finding, ResearchState, add_usage
from .extractive import extractive_sections, reader_findings
from .lines import ReportSection, line_payload
from .relevance import FindingRelevance
from .render import render_sectioned
from .report_events import ReportChecked
from .shape import ReportShape, Style
from .written import write_report


@dataclass(frozen=True)
class DirectAnswer:
    """What the writer chose for a question that has a direct answer, and its checked citation."""

    answer: str
    cite: Citation | None
    choices: list[str]
    judged: AnswerJudgement


def _same_quote(finding: Finding, cite: Citation) -> bool:
    return finding["source"] == cite["source"] and normalise(finding["quote"]) == normalise(cite["quote"])


def number_citations(sections: list[ReportSection], findings: list[Finding],
                     answer_cite: Citation | None) -> tuple[dict[int, int], list[Citation]]:
    """The number each shown finding is cited by (after the answer's own [1], which a finding holding the same
    quote shares), and every line's citations, checked or not (0: a finding no shown line cites)."""
    numbers: dict[int, int] = {}
    next_n = 2 if answer_cite else 1
    for line in (line for s in sections for line in s.shown):
        for i in line.kept:
            if i not in numbers:
                if answer_cite is not None and _same_quote(findings[i], answer_cite):
                    numbers[i] = answer_cite["n"]
                else:
                    numbers[i], next_n = next_n, next_n + 1
    citations = [answer_cite] if answer_cite else []
    for line in (line for s in sections for line in s.lines):
        for i in line.cites:
            f, verified = findings[i], line.supported and i in line.kept
            citations.append(Citation(n=numbers.get(i, 0), source=f["source"], title=f["title"], doc_id=f["doc_id"],
                                      quote=f["quote"], claim=line.text, verified=verified,
                                      reason="" if verified else line.failed.get(i) or line.reason))
    return numbers, citations


async def sectioned_report(state: ResearchState, ctx: ResearchContext, shape: ReportShape, reader: RelevanceReader,
                           note: str, direct: DirectAnswer | None = None, update: dict | None = None) -> dict:
    """The writer's update for a report with sections: answer ("" without a direct answer), report, citations;
    `update`: what the writer's answer call already adds (its usage, its errors)."""
    question, plan = state["question"], state.get("plan", [])
    findings = unique_findings(state.get("findings", []))
    about = FindingRelevance(question, reader, plan)
    source_text = ctx.toolbox.source_text
    update = dict(update or {})
    style: Style = shape.style
    sections = None
    if style == "written":
        written = await write_report(ctx, question, findings, source_text, about)
        if written.usage:
            update["usage"] = add_usage(update.get("usage"), written.usage)
        if written.errors:
            update["step_errors"] = [*update.get("step_errors", []), *written.errors]
        sections = written.sections
        if sections is None and written.errors:  # the model failed to write: the findings quoted, honest if terse
            style = "extractive"
    if sections is None and style == "extractive":
        # the extractor's picks first; a reader pick the extractor already quoted is dropped
        findings = unique_findings(findings + reader_findings(reader, about, state.get("sources", []), source_text,
                                                              ctx.settings.report.quotes))
        sections = extractive_sections(question, findings, plan, source_text, about, ctx.settings.report.quotes)
    if sections is None:
        sections = []
    numbers, citations = number_citations(sections, findings, direct.cite if direct else None)
    answer = direct.answer if direct else ""
    if direct is not None and answer == NOT_FOUND:
        note = "\n\n".join(n for n in (note, render_not_found(state, reader, direct.judged)) if n)
    elif direct is None and not any(s.shown for s in sections):
        note = "\n\n".join(n for n in (note, render_not_found(state, reader, AnswerJudgement.nothing(),
                                                                   NOTHING_TO_REPORT)) if n)
    checked = [c for c in citations if c is not (direct.cite if direct else None)]
    rejected = sum(1 for c in citations if not c["verified"])
    ctx.record(CitationsChecked(checked=len(citations), verified=len(citations) - rejected, removed=rejected,
                                citations=citations, answer_options=direct.choices if direct else None,
                                judgement=direct.judged.payload() if direct else None))
    lines = [line for s in sections for line in s.lines]
    ctx.record(ReportChecked(
        style=style, kind=shape.kind, lines=len(lines), supported=sum(1 for line in lines if line.supported),
        dropped=sum(1 for line in lines if not line.supported),
        supported_citations=sum(1 for c in checked if c["verified"]),
        sections=[{"title": s.title, "lines": [line_payload(line, numbers) for line in s.lines]} for s in sections]))
    sources: dict[int, Citation] = {}
    for c in citations:
        if c["verified"]:
            sources.setdefault(c["n"], c)
    report = render_sectioned(question, style, answer, direct.cite if direct else None, note, sections, numbers,
                              [sources[n] for n in sorted(sources)])
    return {**update, "answer": answer, "report": report, "citations": citations}
