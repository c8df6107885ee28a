"""The reader alone: the graph's answer reader over the question's own search, with no LLM call.

    reader   top-k search (the real search tool), every source read into units as the graph reads them
             (agent/reader), the reader's options and candidates ranked as the writer ranks them (features, then
             relevance), and "not found" where the graph abstains (below its confidence threshold, or a quote not
             about the question: agent/graph/judgement.py)

What it leaves out of the graph: the planner's queries, follow-up hops, the policy's likelihood re-rank, and the
model's choice where the evidence does not decide a yes/no or "A or B" question (here: "not found"). So it
measures the reader by itself, in seconds a question instead of a minute, and shows what the model and the graph
add on the same questions (`deepresearch eval --system reader,graph`).
"""

from __future__ import annotations

from deepresearch.agent.graph.judgement import AnswerJudgement
from deepresearch.agent.reader import (
    NOT_FOUND,
    RelevanceReader,
    answer_confidence,
    answer_options,
    by_relevance,
    evidence_units,
    quote_supported,
)
from deepresearch.evals.data.dataset import EvalQuestion
from deepresearch.evals.run.results import EvalCitation, SystemOutput
from deepresearch.evals.run.systems import SystemContext, guarded, source_text
from deepresearch.evals.run.tooling import Hit


async def run_reader(question: EvalQuestion, ctx: SystemContext) -> SystemOutput:
    rec = ctx.recorder("reader", question)

    async def body() -> SystemOutput:
        tools = ctx.require_tools()
        hits, _error = await tools.search(rec, question.question[:500], ctx.evals.retrieve_k)
        texts = [source_text(h, tools) for h in hits]
        units = [u for rank, (h, text) in enumerate(zip(hits, texts, strict=True))
                 for u in evidence_units(text, rank, h.title, _url(h))]
        found = answer_options(question.question, units, pool=ctx.agent.answer_pool)
        answer, citations, confidence = NOT_FOUND, [], None
        if found.choices is not None:  # a fixed form: answered when the evidence decides it, as the graph does
            if found.decided is not None:
                answer = found.decided.option
                citations = _cite(answer, found.decided.url, found.decided.quote, hits, texts)
        else:
            reader = RelevanceReader(question.question, units)
            pool = by_relevance(found.candidates, reader)
            if pool:
                best = pool[0]
                relevance = reader.of_answer(best.text, best.url, best.quote)
                judged = AnswerJudgement.of_span(best, answer_confidence(best, pool, relevance.score), relevance,
                                                 ctx.agent.min_answer_confidence)
                confidence = judged.confidence
                if not judged.abstained:  # the graph's own rule: likely enough right, and its quote about the question
                    answer = best.text
                    citations = _cite(answer, best.url, best.quote, hits, texts)
        output = rec.finish(answer=answer, citations=citations, stop_reason="finished", evidence=texts,
                            retrieved_doc_ids=[h.doc_id for h in hits if h.doc_id])
        output.confidence = confidence
        output.answer_candidates = [c.text for c in found.candidates] or None
        return output

    return await guarded(rec, body)


def _cite(answer: str, url: str, quote: str, hits: list[Hit], texts: list[str]) -> list[EvalCitation]:
    """The answer's unit as its one citation (about the question, or it would not be the answer): verified, as the
    graph's, when the quote stands in its source's text."""
    for n, (hit, text) in enumerate(zip(hits, texts, strict=True), start=1):
        if _url(hit) == url:
            verified = quote_supported(quote, text)
            return [EvalCitation(n=n, source=url, doc_id=hit.doc_id, quote=quote, claim=answer, verified=verified)]
    return []


def _url(hit: Hit) -> str:
    """Where a unit says it comes from, and so where its answer's citation points."""
    return hit.url or hit.doc_id or ""
