"""The writer's judgement of its best answer: how likely it is right, whether its quote is about the question, and
what the report says when the answer is "not found" (what was searched, what came closest).

A span is answered only when `answer_confidence` (agent/reader/trust/confidence.py) reaches
`agent.min_answer_confidence` and its quote is about the question; otherwise the answer is "not found", never a
verified-looking guess. A yes/no or "A or B" question is always answered: a choice between two is worth more than
abstaining under the trainer's tiers even when the evidence does not settle it.
"""

from __future__ import annotations

from dataclasses import dataclass
from textwrap import shorten
from typing import Any

from deepresearch.agent.reader import ABOUT, Candidate, Relevance, RelevanceReader

from .state import Finding, ResearchState

# What a choice the evidence settles, and one it leaves to the model, are taken to be worth.
DECIDED_CONFIDENCE, UNDECIDED_CONFIDENCE = 0.9, 0.5
CLOSEST_SOURCES = 3


@dataclass(frozen=True)
class AnswerJudgement:
    confidence: float | None  # None: nothing to judge (no candidate)
    relevance: float = 1.0
    threshold: float = 0.0
    candidate: str = ""
    quote: str = ""
    link: str = ""  # the quote a multi-hop chain goes through ("" when the answer's quote is about the question itself)
    bridge: str = ""  # the name the link and the answer's quote share
    link_source: str = ""
    link_title: str = ""
    code_missed: bool = False  # the quote's source writes none of the codes the question names (relevance.py)

    @property
    def about(self) -> bool:
        return self.relevance >= ABOUT

    @property
    def abstained(self) -> bool:
        """The best candidate was not offered: too unlikely right, or its quote not about the question."""
        return self.confidence is not None and bool(self.candidate) and (
            self.confidence < self.threshold or not self.about)

    @classmethod
    def of_choice(cls, decided: bool) -> AnswerJudgement:
        return cls(DECIDED_CONFIDENCE if decided else UNDECIDED_CONFIDENCE)

    @classmethod
    def nothing(cls) -> AnswerJudgement:
        return cls(None, relevance=0.0)

    @classmethod
    def of_span(cls, best: Candidate, confidence: float, relevance: Relevance, threshold: float) -> AnswerJudgement:
        link = relevance.link
        return cls(confidence, relevance.score, threshold, best.text, best.quote, link.text if link else "",
                   relevance.bridge if link else "", link.url if link else "", link.title if link else "",
                   relevance.code_missed)

    def payload(self) -> dict[str, Any]:
        return {"confidence": self.confidence, "relevance": round(self.relevance, 4), "threshold": self.threshold,
                "candidate": self.candidate, "abstained": self.abstained, "link": self.link, "bridge": self.bridge,
                "link_source": self.link_source, "code_missed": self.code_missed}

    def link_finding(self, step_id: int = -1) -> Finding | None:
        """The chain's first step as a finding: the quote about the question that names the bridge."""
        if not self.link or not self.bridge:
            return None
        return Finding(step_id=step_id, claim=self.bridge, quote=self.link, source=self.link_source,
                       title=self.link_title, doc_id=None, start=-1, end=-1)


NOTHING_ANSWERS = "Nothing read answers the question well enough to give an answer."
NOTHING_TO_REPORT = "Nothing read is about the question closely enough to report."


def render_not_found(state: ResearchState, reader: RelevanceReader, judged: AnswerJudgement,
                     lead: str = NOTHING_ANSWERS) -> str:
    """Why the answer is "not found" (or the report empty): what was searched, the best guess that was held back,
    the closest sources."""
    queries = list(dict.fromkeys(s["query"] for s in state.get("plan", []) if s.get("query")))
    lines = [lead]
    if queries:
        lines.append("Searched: " + "; ".join(f"“{q}”" for q in queries[:6]) + ".")
    if judged.candidate:
        why = f"confidence {judged.confidence:.2f}, needed {judged.threshold:.2f}" if judged.about else \
            "its source writes none of the numbers or codes the question names" if judged.code_missed else \
            f"its sentence is not about the question: it covers {judged.relevance:.2f} of it, needed {ABOUT:.2f}"
        lines.append(f"Best guess held back: {judged.candidate} ({why}).")
    closest = reader.closest(CLOSEST_SOURCES)
    if closest:
        lines.append("Closest sources read (not an answer):")
        lines += [f"- {u.title or u.url}: “{shorten(u.text, 160, placeholder=' …')}”" for u, _ in closest]
    return "\n".join(lines)
