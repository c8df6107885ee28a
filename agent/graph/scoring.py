"""The policy scores the reader's candidates: the answer pool re-ranked by its likelihood of each, given the
sentence it came from, and the follow-up hop's bridge names scored by an adapter trained for them. What is asked
and how it is weighed is the reader's (agent/reader/answers/likelihood.py); the calls to the model are made here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from deepresearch.agent.model.base import ModelError
from deepresearch.agent.reader import (
    ANSWER_ROLE,
    BRIDGE_ROLE,
    BRIDGE_TEMPLATE,
    EMPTY_LIKELIHOOD,
    LIKELIHOOD_WEIGHT,
    TEMPLATE,
    TEMPLATE_VERSION,
    Candidate,
)

from .events import AnswerScored, ScoredCandidate

if TYPE_CHECKING:
    from .context import ResearchContext


async def likelihoods(ctx: ResearchContext, template: str, question: str, candidates: Sequence[Candidate],
                      adapter: str | None) -> list[float]:
    """Each candidate's mean log-likelihood after `template` filled with its sentence and the question, one
    score call per sentence (its candidates share the prompt). Raises ModelError if the backend cannot score."""
    by_sentence: dict[str, list[int]] = {}
    for i, cand in enumerate(candidates):
        by_sentence.setdefault(cand.quote, []).append(i)
    scored = await asyncio.gather(*(
        ctx.model.score(template.format(sentence=sentence, question=question),
                        [" " + candidates[i].text for i in members], adapter=adapter)
        for sentence, members in by_sentence.items()
    ))
    out = [EMPTY_LIKELIHOOD] * len(candidates)
    for members, logprobs in zip(by_sentence.values(), scored, strict=True):
        for i, lps in zip(members, logprobs, strict=True):
            out[i] = sum(lps) / len(lps) if lps else EMPTY_LIKELIHOOD
    return out


async def rerank(ctx: ResearchContext, question: str, candidates: list[Candidate], least: int = 2) -> list[Candidate]:
    """Candidates re-sorted by features + likelihood (unchanged when the backend cannot score, or when there are
    fewer than `least`: one candidate needs no ranking unless its score is compared with another pool's)."""
    if len(candidates) < least or not candidates:
        return candidates
    adapter = ctx.policy.adapter_for(ANSWER_ROLE)
    try:
        scored = await likelihoods(ctx, TEMPLATE, question, candidates, adapter)
    except ModelError as exc:  # includes ScoringUnsupported: keep the feature order
        ctx.record(AnswerScored(error=str(exc)))
        return candidates
    likelihood = {cand.text: ll for cand, ll in zip(candidates, scored, strict=True)}
    out = sorted((replace(c, score=c.score + LIKELIHOOD_WEIGHT * likelihood[c.text], likelihood=likelihood[c.text])
                  for c in candidates),
                 key=lambda c: -c.score)
    ctx.record(AnswerScored(template=TEMPLATE_VERSION, weight=LIKELIHOOD_WEIGHT, adapter=adapter, candidates=[
        ScoredCandidate(c.text, features=round(c.score - LIKELIHOOD_WEIGHT * likelihood[c.text], 4),
                        likelihood=round(likelihood[c.text], 4), quote=c.quote) for c in out]))
    return out


async def bridge_likelihoods(ctx: ResearchContext, question: str, names: list[Candidate]) -> list[float] | None:
    """Each name's mean log-likelihood under the adapter trained for the bridge (its score is then
    features + LIKELIHOOD_WEIGHT · likelihood); None when the run's adapter was not trained for it, or the
    backend cannot score (the rule then chooses)."""
    if len(names) < 2 or not ctx.policy.adapter.trained_for(BRIDGE_ROLE):
        return None
    try:
        return await likelihoods(ctx, BRIDGE_TEMPLATE, question, names, ctx.policy.adapter_for(BRIDGE_ROLE))
    except ModelError:  # includes ScoringUnsupported
        return None
