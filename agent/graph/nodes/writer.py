"""Writer: the evidence → report (direct answer first, key points with [n] citations, source list),
then the citation check; unsupported citations are removed from the text and flagged.

The direct answer is chosen, not written: one of the answer options the reader finds in the sentences
the run read (agent/reader: an answer-form choice, or the one the evidence decides for, or a span of the
evidence re-ranked by the policy's likelihood), or "not found", enforced by the grammar. A chosen span or
option cites the sentence it came from.

An open question (explain, compare, summarise) gets sections instead: checked quotes grouped by what was searched,
or sentences a model that writes wrote and the check kept (agent/graph/report/, agent.report.style).
"""

from __future__ import annotations

from collections.abc import Callable

from deepresearch.agent.prompts import load_prompt
from deepresearch.agent.reader import (
    ABOUT,
    NOT_FOUND,
    Candidate,
    RelevanceReader,
    answer_confidence,
    answer_options,
    by_relevance,
    normalise,
)
from deepresearch.tools.untrusted import fence_untrusted
from langgraph.runtime import Runtime

from ..citations import NOT_ABOUT, check_citation
from ..context import MalformedOutput, ResearchContext
from ..events import CitationsChecked, OptionDecided
from ..findings import render_findings, unique_findings
from ..judgement import AnswerJudgement, render_not_found
from ..last_hop import by_last_hop, widened_pool
from ..reading import read_sentences
from ..report.compose import DirectAnswer, sectioned_report
from ..report.render import chain_line
from ..report.shape import report_shape
from ..schemas import ReportPoint, WriterOut, writer_schema
from ..scoring import rerank
from ..state import Citation, Finding, PlanStep, ResearchState, SourceRead

# Of the re-ranked pool (agent.answer_pool), offered to the writer besides "not found"; measured: its choice among
# 3 was worse than the best-ranked one (3 vs 5 right of 37), so it decides between that one and "not found".
ANSWER_OPTIONS = 1
STOP_NOTES = {
    "budget_stop": "This run stopped early: {detail}; {reached}. The answer may be incomplete.",
    "loop_stop": "This run stopped early: {detail} (loop detected); {reached}. The answer may be incomplete.",
}


def hop_reached(plan: list[PlanStep]) -> str:
    """How far along a multi-hop chain a stopped run got: its follow-up hops searched, or not yet."""
    hops = [s for s in plan if s.get("bridge")]
    searched = [s["bridge"] for s in hops if s["status"] in ("done", "failed")]
    waiting = [s["bridge"] for s in hops if s["status"] not in ("done", "failed")]
    if not hops:
        return "it stopped in the first round of searches, before any follow-up hop"
    if waiting and searched:
        return f"it searched the follow-up hop for {', '.join(searched)} and stopped before the one for " \
               f"{', '.join(waiting)}"
    if waiting:
        return f"it stopped before the follow-up hop for {', '.join(waiting)}"
    return f"it reached the follow-up hop for {', '.join(searched)}"


def render_report(question: str, answer: str, answer_cite: Citation | None, points: list[ReportPoint],
                  point_cites: list[Citation | None], note: str, chain_cite: Citation | None = None) -> str:
    """The report's markdown; `point_cites[i]` is point i's own checked citation (None: it cited nothing);
    `chain_cite`: a multi-hop answer's first step (the quote about the question that names the bridge)."""
    mark = f" [{answer_cite['n']}]" if answer_cite and answer_cite["verified"] else ""
    lines = [f"# {question}", "", f"**Answer:** {answer}{mark}", "", *chain_line(answer_cite, chain_cite)]
    if note:
        lines += ["> " + line if line else ">" for line in note.split("\n")] + [""]
    for p, c in zip(points, point_cites, strict=True):
        if c is not None and c["reason"] == NOT_ABOUT:
            continue  # a point that is not about the question is no key point, supported or not
        if c is None:
            lines.append(f"- {p.text}")
        elif c["verified"]:
            lines.append(f"- {p.text} [{c['n']}]")
        else:
            lines.append(f"- {p.text} _(unsupported: citation removed — {c['reason']})_")
    verified = {c["n"]: c for c in [answer_cite, chain_cite, *point_cites] if c is not None and c["verified"]}
    if verified:
        lines += ["", "## Sources", ""]
        for c in verified.values():
            lines.append(f"[{c['n']}] {c['title'] or c['source']} — {c['source']}")
            lines.append(f"    > {c['quote']}")
    return "\n".join(lines) + "\n"


def cite_points(points: list[ReportPoint], findings: list[Finding], first: list[Citation],
                source_text: Callable[[str], str | None], reader: RelevanceReader) -> list[Citation | None]:
    """Check every point against the finding it cites, each point on its own (a point is its finding's
    quote, so the check fails when the source no longer holds the quote or the quote is not about the question).
    Findings are numbered after the `first` citations (the answer's, a chain's) in order of first use; one holding
    a first citation's quote shares its number."""
    numbers = {i: c["n"] for i, f in enumerate(findings, 1) for c in first if _same_quote(f, c)}
    next_n = max((c["n"] for c in first), default=0) + 1
    out: list[Citation | None] = []
    for p in points:
        if not 1 <= p.cite <= len(findings):
            out.append(None)
            continue
        if p.cite not in numbers:
            numbers[p.cite], next_n = next_n, next_n + 1
        found = findings[p.cite - 1]
        about = reader.of(found["source"], found["quote"], found["title"]).score >= ABOUT
        out.append({**check_citation(0, found, p.text, source_text, about=about), "n": numbers[p.cite]})
    return out


def _same_quote(finding: Finding, cite: Citation) -> bool:
    return finding["source"] == cite["source"] and normalise(finding["quote"]) == normalise(cite["quote"])


def render_candidates(candidates: list[Candidate], chars: int) -> str:
    if not candidates:
        return "(none)"
    # Spans and sentences of the pages read: untrusted, like the findings.
    return fence_untrusted("\n".join(f'- {c.text} — "{c.quote[:chars]}"' for c in candidates),
                           source="the sources read in this run")


def answer_finding(candidate: Candidate, sources: list[SourceRead]) -> Finding:
    """The chosen span as a finding: the sentence it came from, cited for the answer."""
    src = next((s for s in sources if s["url"] == candidate.url), None)
    return Finding(step_id=src["step_id"] if src else -1, claim=candidate.text, quote=candidate.quote,
                   source=candidate.url, title=src["title"] if src else "", doc_id=src["doc_id"] if src else None,
                   start=-1, end=-1)


async def offered_answers(state: ResearchState, ctx: ResearchContext,
                          reader: RelevanceReader) -> tuple[list[str], list[Candidate], AnswerJudgement]:
    """The answers the writer may give besides "not found", the candidates (with the sentence each cites) among
    them, and the judgement of the best one: the reader's options for the evidence read, a free-form question's
    re-ranked by the policy's likelihood and offered only when it is likely enough right (else none: the
    answer is "not found")."""
    question, sources = state["question"], state.get("sources", [])
    steps = {s["id"]: s for s in state.get("plan", []) if s.get("bridge")}
    hops = {i: s["bridge"] for i, s in steps.items()}
    wide = widened_pool(ctx, list(steps.values()))
    found = answer_options(question, reader.units, pool=wide, bridges=list(hops.values()))
    if found.choices is not None:
        decided = found.decided
        ctx.record(OptionDecided(options=found.choices, option=decided.option if decided else None,
                                 rule=decided.rule if decided else None, quote=decided.quote if decided else ""))
        # A fixed form is answered whatever the evidence: a choice the evidence settles, or the model's between two.
        return found.offered, found.candidates, AnswerJudgement.of_choice(decided is not None)
    if len(hops) < 2:
        cut = await by_last_hop(ctx, found.candidates, next(iter(steps.values()))) if steps else found.candidates
        pool = await rerank(ctx, question, by_relevance(cut, reader))
    else:  # several hops at once (agent.bridge_hops): each hop's evidence ranked apart, the best-scored pick kept
        pools = []
        for b, step in {s["bridge"]: s for s in steps.values()}.items():
            # a hop's evidence: its own sources and every other step's but a hop's
            own = read_sentences([s for s in sources if hops.get(s["step_id"], b) == b], ctx.toolbox.source_text)
            ranked = await by_last_hop(ctx, answer_options(question, own, pool=wide, bridges=[b]).candidates, step)
            pools.append(await rerank(ctx, question, by_relevance(ranked, reader), least=1))
        pool = max(pools, key=lambda p: p[0].score if p else float("-inf"))
    best = pool[:ANSWER_OPTIONS]
    if not best:
        return [], [], AnswerJudgement.nothing()
    relevance = reader.of_answer(best[0].text, best[0].url, best[0].quote)
    judged = AnswerJudgement.of_span(best[0], answer_confidence(best[0], pool, relevance.score), relevance,
                                     ctx.settings.min_answer_confidence)
    if judged.abstained:
        return [], [], judged
    return [c.text for c in best], best, judged


async def writer(state: ResearchState, runtime: Runtime[ResearchContext]) -> dict:
    ctx = runtime.context
    question = state["question"]
    findings = unique_findings(state.get("findings", []))[: ctx.settings.max_sources_in_prompt]
    reason = state.get("stop_reason") or "finished"
    note = STOP_NOTES[reason].format(detail=state.get("stop_detail", ""), reached=hop_reached(state.get("plan", []))) \
        if reason in STOP_NOTES else ""
    reader = RelevanceReader(question, read_sentences(state.get("sources", []), ctx.toolbox.source_text))
    shape = report_shape(question, ctx.settings.report, ctx.model)  # an open question's report: report/
    if not shape.direct_answer:
        return await sectioned_report(state, ctx, shape, reader, note)
    choices, candidates, judged = await offered_answers(state, ctx, reader)
    update: dict = {}
    try:
        out, usage = await ctx.ask_model(
            load_prompt("writer"), WriterOut, writer_schema(len(findings), choices=choices), step="writer",
            question=question, findings=render_findings(findings, ctx.settings.evidence_chars),
            candidates=render_candidates(candidates, ctx.settings.evidence_chars) if candidates else
            "\n".join(f"- {c}" for c in choices) or "(none)",
            note=f"\nNote: {note}\n" if note else "",
        )
        update["usage"] = usage
        answer, cited = out.answer.strip(), [n for n in dict.fromkeys(out.points) if 1 <= n <= len(findings)]
    except MalformedOutput as exc:
        # Fall back to the best-ranked candidate and the findings themselves: honest, if terse.
        answer, cited = candidates[0].text if candidates else NOT_FOUND, list(range(1, len(findings) + 1))
        update["step_errors"] = [f"writer: {exc}"]
    points = [ReportPoint(text=findings[n - 1]["quote"], cite=n) for n in cited]

    # The answer's own citation first, then the points' in order of first use; each checked against its source
    # and for being about the question.
    chosen = next((c for c in candidates if c.text == answer), None)
    answer_cite = chain_cite = None
    if chosen is not None:
        answer_cite = check_citation(1, answer_finding(chosen, state.get("sources", [])), answer,
                                     ctx.toolbox.source_text, about=judged.about)
        # A multi-hop answer's chain, checked link by link: the first quote names the bridge (its claim), the
        # answer's quote (or its title) names it too (relevance.py linked them by it).
        if (link := judged.link_finding()) is not None and answer_cite["verified"]:
            chain_cite = check_citation(2, link, judged.bridge, ctx.toolbox.source_text)
    if shape.sections:  # the report's sections in place of the key points, under the answer (and its chain)
        return await sectioned_report(state, ctx, shape, reader, note,
                                      DirectAnswer(answer, answer_cite, choices, judged, chain_cite), update)
    first = [c for c in (answer_cite, chain_cite) if c is not None]
    point_cites = cite_points(points, findings, first, ctx.toolbox.source_text, reader)
    citations = first + [c for c in point_cites if c is not None]
    rejected = sum(1 for c in citations if not c["verified"])
    ctx.record(CitationsChecked(checked=len(citations), verified=len(citations) - rejected, removed=rejected,
                                citations=citations, answer_options=choices, judgement=judged.payload()))
    if answer == NOT_FOUND:
        note = "\n\n".join(n for n in (note, render_not_found(state, reader, judged)) if n)
    report = render_report(question, answer, answer_cite, points, point_cites, note, chain_cite)
    return {**update, "answer": answer, "report": report, "citations": citations}
