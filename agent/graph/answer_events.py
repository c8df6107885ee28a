"""The writer's events: the answer candidates the policy re-ranked, the option the evidence decided, the citations
after the check (with the judgement of the answer)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from .run_event import RunEvent
from .state import Citation


@dataclass(frozen=True)
class ScoredCandidate:
    """One candidate of a scored choice (an answer span, a bridge name): what the trainer needs to score it
    again exactly (train/answer_choice.py: the feature score and the sentence the likelihood is conditioned on)."""

    text: str
    features: float  # the feature score (agent/reader/answers/candidates.py)
    likelihood: float  # mean log π of the span given its sentence and the question
    quote: str = ""  # that sentence; "" in traces written before it was logged

    def payload(self) -> dict[str, Any]:
        return {"text": self.text, "features": self.features, "likelihood": self.likelihood, "quote": self.quote}

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> ScoredCandidate:
        return cls(text=str(payload.get("text", "")), features=float(payload.get("features", 0.0)),
                   likelihood=float(payload.get("likelihood", 0.0)), quote=str(payload.get("quote") or ""))


@dataclass(frozen=True)
class AnswerScored(RunEvent):
    """The policy's likelihood re-ranked the answer candidates, best first (or could not: `error`)."""

    trace_kind: ClassVar[str | None] = "answer_scores"
    template: str = ""
    weight: float = 0.0
    candidates: list[ScoredCandidate] = field(default_factory=list)
    error: str | None = None
    adapter: str | None = None  # the weights that scored: a name, "" = the base model, None = the model's active one

    def trace_payload(self) -> dict[str, Any]:
        if self.error is not None:
            return {"error": self.error}
        return {"template": self.template, "weight": self.weight, "adapter": self.adapter,
                "candidates": [c.payload() for c in self.candidates]}

    @classmethod
    def from_trace(cls, payload: dict[str, Any]) -> AnswerScored:
        if "error" in payload:
            return cls(error=str(payload["error"]))
        return cls(template=str(payload.get("template", "")), weight=float(payload.get("weight", 0.0)),
                   candidates=[ScoredCandidate.from_payload(c) for c in payload.get("candidates") or []],
                   adapter=payload.get("adapter"))


@dataclass(frozen=True)
class OptionDecided(RunEvent):
    """A yes/no or "A or B" question: the answer the evidence decided for (`option`, by `rule`, on
    `quote`), or None when it did not and the writer's model chooses between `options`."""

    trace_kind: ClassVar[str | None] = "option_decision"
    options: list[str]
    option: str | None = None
    rule: str | None = None
    quote: str = ""

    def trace_payload(self) -> dict[str, Any]:
        return {"options": self.options, "option": self.option, "rule": self.rule, "quote": self.quote}

    @classmethod
    def from_trace(cls, payload: dict[str, Any]) -> OptionDecided:
        return cls(options=[str(o) for o in payload.get("options") or []], option=payload.get("option"),
                   rule=payload.get("rule"), quote=str(payload.get("quote", "")))


@dataclass(frozen=True)
class CitationsChecked(RunEvent):
    """The report's citations after the check; `answer_options` is what the writer could answer."""

    trace_kind: ClassVar[str | None] = "citation_check"
    streamed: ClassVar[bool] = True
    checked: int
    verified: int
    removed: int
    citations: list[Citation] = field(default_factory=list)
    answer_options: list[str] | None = None
    judgement: dict[str, Any] | None = None  # the best answer's confidence and relevance (graph/judgement.py)

    def trace_payload(self) -> dict[str, Any]:
        return {"checked": self.checked, "verified": self.verified, "removed": self.removed,
                "citations": self.citations, "answer_options": self.answer_options, "judgement": self.judgement}

    @classmethod
    def from_trace(cls, payload: dict[str, Any]) -> CitationsChecked:
        options = payload.get("answer_options")
        return cls(checked=int(payload.get("checked", 0)), verified=int(payload.get("verified", 0)),
                   removed=int(payload.get("removed", 0)), citations=list(payload.get("citations") or []),
                   answer_options=[str(o) for o in options] if isinstance(options, list) else None,
                   judgement=payload.get("judgement") if isinstance(payload.get("judgement"), dict) else None)
