"""Which report a question gets: today's answer span with key points, the extractive report, or the written one.

    factoid question, style auto or answer     → the answer span (or "not found") and key points, as before
    open question, style answer (or auto on a model that does not write: the embedded 135M)
                                               → the extractive report: checked quotes grouped by what was searched
    open question, style auto on a model that writes (a served model), or any question with style written
                                               → the written report: an outline, then sections of checked sentences

A direct answer stays on top when the question has one: every factoid question, and an open question whose
form fixes its answer (yes/no, "A or B"). "Compare A and B" has none: no span of a page is its answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from deepresearch.agent.config import ReportSettings
from deepresearch.agent.model.base import ChatModel
from deepresearch.agent.reader import QuestionKind, answer_choices, question_kind

Style = Literal["answer", "extractive", "written"]


@dataclass(frozen=True)
class ReportShape:
    kind: QuestionKind
    style: Style
    direct_answer: bool  # the writer chooses an answer span or option (or "not found") to put on top

    @property
    def sections(self) -> bool:
        """The report has sections (extractive or written) instead of key points."""
        return self.style != "answer"


def report_shape(question: str, settings: ReportSettings, model: ChatModel) -> ReportShape:
    kind = question_kind(question)
    if settings.style == "written" or (settings.style == "auto" and kind == "open" and model.writes):
        style: Style = "written"
    elif kind == "open":
        style = "extractive"
    else:
        style = "answer"
    return ReportShape(kind, style, direct_answer=kind == "factoid" or answer_choices(question) is not None)
