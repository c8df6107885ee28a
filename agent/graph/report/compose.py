"""The sectioned report (extractive or written, shape.py) put together: the direct answer on top when there is
one (with a multi-hop answer's chain of cited steps under it, as the key points have it), the sections, the
citations numbered in order of first use (the answer's first, then its chain's), the events, the markdown.

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
from .written import WrittenReport, write_report


@dataclass(frozen=True)
class DirectAnswer:
    """What the writer chose for a question that has a direct answer, and its checked citation."""

    answer: str
    cite: Citation | None
    choices: list[str]
    judged: AnswerJudgement
    chain: Citation | None = None  # a multi-hop answer's first step: the quote about the question naming the bridge

    @property
    def first(self) -> list[Citation]:
        """The citations numbered before any section's: the answer's [1], its chain's [2]."""
        return [c for c in (self.cite, self.chain) if c is not None]


def _same_quote(finding: Finding, cite: Citation) -> bool:
    return finding["source"] == cite["source"] and normalise(finding["quote"]) == normalise(cite["quote"])


def number_citations(sections: list[ReportSection], findings: list[Finding],
                     first: list[Citation]) -> tuple[dict[int, int], list[Citation]]:
    """The number each shown finding is cited by (after the `first` citations, the answer's [1] and its chain's
    [2], whose number a finding holding the same quote shares), and `first` followed by every line's citations,
    checked or not (0: a finding no shown line cites)."""
    numbers: dict[int, int] = {}
    next_n = max((c["n"] for c in first), default=0) + 1
    for line in (line for s in sections for line in s.shown):
        for i in line.kept:
            if i not in numbers:
                same = next((c for c in first if _same_quote(findings[i], c)), None)
                if same is not None:
                    numbers[i] = same["n"]
                else:
                    numbers[i], next_n = next_n, next_n + 1
    citations = list(first)
    for line in (line for s in sections for line in s.lines):
        for i in line.cites:
            f, verified = findings[i], line.supported and i in line.kept
            citations.append(Citation(n=numbers.get(i, 0), source=f["source"], title=f["title"], doc_id=f["doc_id"],
                                      quote=f["quote"], claim=line.text, verified=verified,
                                      reason="" if verified else line.failed.get(i) or line.reason))
    return numbers, citations


def written_fallback(written: WrittenReport) -> str:
    """Why a written report gives way to the extractive one ("" when it has a sentence to show): it had no finding
    to write from, the model failed to write it, or the check removed every sentence it wrote. The reason opens the
    extractive report's intro line (render.py `fallback_intro`)."""
    if not written.findings:
        return "The model was given no finding to write from (none passed its own check)"
    if written.sections is None:
        return ("The model could not write the report (its outline failed)" if written.errors else
                "The model's outline named no finding to write from")
    if any(s.shown for s in written.sections):
        return ""
    removed = sum(len(s.lines) for s in written.sections)
    if not removed:
        return "The model wrote no sentence"
    return f"The check removed every sentence the model wrote ({removed})"


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
    # Both styles work from the same findings: the extractor's picks first, then the reader's own best units (a
    # small model's picks are often not about the question while a unit that is stands unread); a reader pick the
    # extractor already quoted is dropped. Each is checked again where it is used (write_report, check_line).
    findings = unique_findings(findings + reader_findings(reader, about, state.get("sources", []), source_text,
                                                          ctx.settings.report.quotes))
    sections, fallback, attempt = None, "", []
    if style == "written":
        written = await write_report(ctx, question, findings, source_text, about)
        if written.usage:
            update["usage"] = add_usage(update.get("usage"), written.usage)
        if written.errors:
            update["step_errors"] = [*update.get("step_errors", []), *written.errors]
        sections = written.sections
        fallback = written_fallback(written)
        if fallback:  # nothing written survived: the findings quoted, honest if terse, and the intro says why
            attempt = [{"title": s.title, "lines": [line_payload(line, {}) for line in s.lines]}
                       for s in sections or []]  # each sentence the model wrote, with why the check removed it
            sections, style = None, "extractive"
    if sections is None:
        sections = extractive_sections(question, findings, plan, source_text, about, ctx.settings.report.quotes)
    first = direct.first if direct else []
    numbers, citations = number_citations(sections, findings, first)
    answer = direct.answer if direct else ""
    if direct is not None and answer == NOT_FOUND:
        note = "\n\n".join(n for n in (note, render_not_found(state, reader, direct.judged)) if n)
    elif direct is None and not any(s.shown for s in sections):
        note = "\n\n".join(n for n in (note, render_not_found(state, reader, AnswerJudgement.nothing(),
                                                                   NOTHING_TO_REPORT)) if n)
    checked = citations[len(first):]  # the lines' own
    rejected = sum(1 for c in citations if not c["verified"])
    ctx.record(CitationsChecked(checked=len(citations), verified=len(citations) - rejected, removed=rejected,
                                citations=citations, answer_options=direct.choices if direct else None,
                                judgement=direct.judged.payload() if direct else None))
    lines = [line for s in sections for line in s.lines]
    ctx.record(ReportChecked(
        style=style, kind=shape.kind, lines=len(lines), supported=sum(1 for line in lines if line.supported),
        dropped=sum(1 for line in lines if not line.supported),
        supported_citations=sum(1 for c in checked if c["verified"]),
        sections=[{"title": s.title, "lines": [line_payload(line, numbers) for line in s.lines]} for s in sections],
        fallback=fallback, written=attempt))
    sources: dict[int, Citation] = {}
    for c in citations:
        if c["verified"]:
            sources.setdefault(c["n"], c)
    report = render_sectioned(question, style, answer, direct.cite if direct else None, note, sections, numbers,
                              [sources[n] for n in sorted(sources)], direct.chain if direct else None, fallback)
    return {**update, "answer": answer, "report": report, "citations": citations}
