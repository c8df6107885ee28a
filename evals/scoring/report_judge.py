"""An LLM judge's score of one report (eval.judge): 0 (useless) to 10, read back as 0..1.

Absolute, one report at a time, unlike the trainer's relative group ranking (train/rounds/judge.py, which evals may
not import): an eval compares systems by their mean. Like the trainer's, the judge is the configured model itself,
so the score means something only on a model that can judge (a served one), and it sits beside the report's
supported-citation metrics, never in their place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from deepresearch.agent.model.base import ChatModel

JUDGE_SYSTEM = (
    "You grade a research report that answers a question. Reward a report that answers what was asked, covers its "
    "parts, and backs every claim with a cited source. Penalise claims no source supports, padding, and text "
    "that is not about the question. Score it from 0 (useless) to 10 (as good as a report can be)."
)
SCHEMA = {"type": "object", "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 10}},
          "required": ["score"], "additionalProperties": False}


class JudgeScore(BaseModel):
    score: float = Field(ge=0, le=10)


def judge_messages(question: str, report: str, max_chars: int) -> list[dict[str, str]]:
    user = f"Question: {question}\n\nReport:\n{report[:max_chars]}\n\nReply with JSON: {{\"score\": 0 to 10}}"
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]


async def judge_report(model: ChatModel, question: str, report: str, max_chars: int = 6000,
                       max_tokens: int = 16) -> float | None:
    """The judge's score in [0, 1], or None when its reply is unusable (left out, not guessed)."""
    from deepresearch.agent.model.types import Sampling

    completion = await model.chat(judge_messages(question, report, max_chars), schema=SCHEMA,
                                  sampling=Sampling(temperature=0.0, max_tokens=max_tokens))
    try:
        value = completion.parsed if completion.parsed is not None else completion.text
        parsed = JudgeScore.model_validate(value) if isinstance(value, dict) else JudgeScore.model_validate_json(value)
    except ValueError:
        return None
    return parsed.score / 10.0
