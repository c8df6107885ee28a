"""Relative LLM-as-judge reward (in the spirit of ART's RULER): one call sees all G reports of a group
and scores each 0–10 against the others. Relative scoring is what GRPO needs (only differences within a
group matter) and is far easier for a judge than absolute grading. Works for questions with no gold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:
    from deepresearch.agent.model.base import ChatModel

JUDGE_SYSTEM = (
    "You compare research reports that answer the same question. Reward reports that answer the question "
    "directly and correctly, back every claim with a cited source, and say 'not found' rather than guess. "
    "Penalise unsupported claims, padding and wrong answers. Score each report from 0 (useless) to 10 "
    "(best possible), relative to the others."
)


class JudgeScores(BaseModel):
    scores: list[float]


def judge_schema(n: int) -> dict:
    return {
        "type": "object",
        "properties": {"scores": {"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 10},
                                  "minItems": n, "maxItems": n}},
        "required": ["scores"],
    }


def judge_messages(question: str, reports: list[str], max_chars: int) -> list[dict[str, str]]:
    body = "\n\n".join(f"### Report {i}\n{r[:max_chars]}" for i, r in enumerate(reports, 1))
    user = (f"Question: {question}\n\n{body}\n\nReply with JSON: {{\"scores\": [one number per report, "
            f"in order, {len(reports)} numbers]}}")
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]


async def judge_group(
    model: ChatModel, question: str, reports: list[str], max_chars: int = 2000, max_tokens: int = 128,
) -> list[float] | None:
    """Scores in [0, 1], one per report, or None when the judge's reply is unusable (the term is then
    left out for the whole group rather than guessed)."""
    from deepresearch.agent.model.types import Sampling

    if len(reports) < 2:
        return None
    completion = await model.chat(
        judge_messages(question, reports, max_chars), schema=judge_schema(len(reports)),
        sampling=Sampling(temperature=0.0, max_tokens=max_tokens),
    )
    try:
        value = completion.parsed if completion.parsed is not None else completion.text
        parsed = (JudgeScores.model_validate(value) if isinstance(value, dict)
                  else JudgeScores.model_validate_json(value))
    except ValueError:
        return None
    if len(parsed.scores) != len(reports):
        return None
    return [min(max(s, 0.0), 10.0) / 10.0 for s in parsed.scores]
