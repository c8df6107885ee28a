"""The uniform per-question record every system produces, and how it is scored.

A system returns a `SystemOutput`; `score_output` joins it with the question and the metrics
into a `QuestionResult`, one line of results.jsonl. Reports and comparisons read only these.
"""

from __future__ import annotations

from typing import Literal

from deepresearch.agent.graph.citations import unsupported_terms
from deepresearch.evals.data.dataset import EvalQuestion
from deepresearch.evals.run.scored_run import answer_scores
from deepresearch.evals.scoring.metrics import (
    answer_in_text,
    citation_precision_recall,
    exact_match,
    is_abstention,
    verified_share,
)
from pydantic import BaseModel, Field

StopReason = Literal["finished", "budget_stop", "loop_stop", "error"]


class EvalCitation(BaseModel):
    n: int
    source: str  # url or doc id
    doc_id: str | None = None
    quote: str = ""
    claim: str = ""  # what the citation is cited for (a point, or the answer)
    verified: bool = False


class ReportFacts(BaseModel):
    """An open question's report (or any, with agent.report.style = written), from its ReportChecked event:
    the lines it checked (written sentences, or an extractive report's quotes), how many were shown (supported),
    how many the check removed or left out, and the verified citations the shown ones carry."""

    style: str
    lines: int = 0
    supported: int = 0
    dropped: int = 0
    supported_citations: int = 0
    judge: float | None = Field(None, description="an LLM judge's score of the report, 0..1 (eval.judge); None: off")


class SystemOutput(BaseModel):
    """What one system did for one question."""

    answer: str = ""
    citations: list[EvalCitation] = Field(default_factory=list)
    retrieved_doc_ids: list[str] = Field(default_factory=list)
    evidence: list[str] | None = Field(
        None, description="texts the system retrieved (search/open results); None: it does not retrieve"
    )
    tool_calls: int = 0
    llm_calls: int = 0
    llm_tokens: int = 0  # prompt + completion over all calls
    completion_tokens: int = 0
    wall_s: float = 0.0
    stop_reason: StopReason = "finished"
    error: str | None = None
    run_id: str | None = None
    answer_options: list[str] | None = Field(
        None, description="the answers the writer could choose from (graph runs only; None: not recorded)"
    )
    answer_candidates: list[str] | None = Field(
        None, description="the candidate answers the re-ranker chose among, best first; the writer's options when "
        "there was nothing to re-rank (graph runs only; None: not recorded, or the re-ranker failed)"
    )
    leaked: bool | None = Field(
        None, description="a prompt's few-shot example surfaced in an output (graph runs only; None: not checked)"
    )
    confidence: float | None = Field(
        None, description="the system's own confidence in its answer, higher = surer (graph runs only; None: "
        "not recorded); the coverage-precision curve sorts answers by it"
    )
    report: ReportFacts | None = Field(
        None, description="the sectioned report's check (graph runs only; None: a factoid report of key points)"
    )

    @property
    def cited_doc_ids(self) -> list[str]:
        seen: dict[str, None] = {}
        for c in self.citations:
            if c.doc_id:
                seen.setdefault(c.doc_id, None)
        return list(seen)


class QuestionScores(BaseModel):
    em: float
    f1: float
    citation_precision: float | None = None  # None: no gold documents, or a system without sources
    citation_recall: float | None = None
    verified_share: float | None = None  # None: nothing cited
    supported_share: float | None = None  # verified and the quote holds the claim's names/numbers; None: no cites
    found_in_evidence: float | None = None  # None: yes/no question, or a system that does not retrieve
    offered: float | None = None  # the gold answer was among the writer's options; None: not recorded
    # The gold among the re-ranker's candidates: what a perfect answer choice would reach. None: yes/no
    # question, or not recorded.
    among_candidates: float | None = None
    answered: float = 1.0  # 0: the system said "not found" (or nothing)
    # A wrong answer shown as verified: answered, not right, and its own citation passed the check. The failure a
    # reader cannot see: it looks exactly like a right answer.
    wrong_verified: float = 0.0
    # A sectioned report (None: key points): the share of its checked sentences shown with a supported citation
    # (FACT-style citation accuracy), its supported citations, the sentences the check removed, a judge's score.
    report_supported_share: float | None = None
    report_supported_citations: float | None = None
    report_dropped: float | None = None
    report_judge: float | None = None


class QuestionResult(BaseModel):
    """One line of results.jsonl."""

    eval_id: str
    system: str
    question_id: str
    question: str
    gold: list[str]
    qtype: str | None = None
    source: str | None = None
    yes_no: bool = False
    output: SystemOutput
    scores: QuestionScores

    @property
    def key(self) -> tuple[str, str]:
        return self.system, self.question_id

    @property
    def unanswerable(self) -> bool:
        """The question set says no document holds the answer (gold "not found")."""
        return bool(self.gold) and is_abstention(self.gold[0])


def score_output(question: EvalQuestion, output: SystemOutput) -> QuestionScores:
    yes_no = question.is_yes_no
    precision = recall = None
    if output.evidence is not None:  # a system without sources (closed-book) cannot cite: n/a, not 0
        precision, recall = citation_precision_recall(output.cited_doc_ids, question.gold_doc_ids)
    found: float | None = None
    if not yes_no and output.evidence is not None:
        found = float(answer_in_text(output.evidence, question.golds))
    em, f1_score = answer_scores(output.answer, question)  # as run_scored scores a graph run
    answered = not is_abstention(output.answer)
    answer_cited = any(c.verified and c.claim.strip() == output.answer.strip() for c in output.citations)
    return QuestionScores(
        em=em,
        f1=f1_score,
        citation_precision=precision,
        citation_recall=recall,
        verified_share=verified_share(c.verified for c in output.citations),
        supported_share=verified_share(
            c.verified and not unsupported_terms(c.claim, c.quote) for c in output.citations
        ),
        found_in_evidence=found,
        offered=_among(output.answer_options, question, yes_no),
        among_candidates=_among(output.answer_candidates, question, yes_no),
        answered=float(answered),
        wrong_verified=float(answered and em == 0.0 and answer_cited),
        **report_scores(output.report),
    )


def report_scores(report: ReportFacts | None) -> dict[str, float | None]:
    if report is None:
        return {}
    return {"report_supported_share": report.supported / report.lines if report.lines else None,
            "report_supported_citations": float(report.supported_citations),
            "report_dropped": float(report.dropped), "report_judge": report.judge}


def _among(answers: list[str] | None, question: EvalQuestion, yes_no: bool) -> float | None:
    if answers is None or yes_no:
        return None
    return float(any(exact_match(answer, question.golds) for answer in answers))


def make_result(eval_id: str, system: str, question: EvalQuestion, output: SystemOutput) -> QuestionResult:
    return QuestionResult(
        eval_id=eval_id, system=system, question_id=question.id, question=question.question,
        gold=question.golds, qtype=question.type, source=question.source, yes_no=question.is_yes_no,
        output=output, scores=score_output(question, output),
    )


def rescored(result: QuestionResult) -> QuestionResult:
    """The result scored again from its output (the question rebuilt from what the result kept of it; a result does
    not keep the gold documents, so its citation precision and recall stay as they were)."""
    question = EvalQuestion(id=result.question_id, question=result.question, answer=result.gold[0],
                            answer_aliases=result.gold[1:], type=result.qtype, source=result.source,
                            yes_no=result.yes_no)
    scores = score_output(question, result.output).model_copy(update={
        "citation_precision": result.scores.citation_precision, "citation_recall": result.scores.citation_recall})
    return result.model_copy(update={"scores": scores})
