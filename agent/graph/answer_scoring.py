"""Re-rank answer candidates by the policy's own likelihood of each, given the sentence it came from.

    score(c) = features(c) + LIKELIHOOD_WEIGHT · mean_t log π(c_t | "Context: <sentence> Question: <q> Answer:", c_<t)

The feature ranking (candidates.py) finds spans of the right kind near the question's words; the
model then says which of them reads as the answer. Measured on 400 pool *train* questions (none of the
eval's dev questions): the best candidate was right for 37 with features alone and for 50 with both.
Alternatives measured on the 156 of 700 other train questions whose gold is among the five (features alone:
62 right): this template, mean log-probability, weight 1: 83; weight 0.5 or 2: 79, 74; likelihood alone:
61; the sum instead of the mean: 68; the question before the sentence: 72; the chat template: 71 (its
first token only: 78). The ceiling is the five themselves: they hold the gold for ~22 % of questions.
Re-ranking more of them does not lift it: on 300 train questions (the top 20 by features scored once),
top-1 was 37 at k = 5, 37 at k = 10 and 36 at k = 20 (weight 1; 31 and 27 at weight 1.5 and 3), though
the top 20 hold the gold for 112; a weight vector fitted on features + likelihood + first-token + length
(two-fold, three splits) reached 34-37 at every k. The likelihood cannot tell the gold from more spans.
The same quantity, the policy's probability of the gold answer given the evidence, is what an
information-gain reward measures, so training the policy sharpens this choice too.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from deepresearch.agent.model.base import ModelError

from .candidates import Candidate
from .events import AnswerScored, ScoredCandidate

if TYPE_CHECKING:
    from .context import ResearchContext

LIKELIHOOD_WEIGHT = 1.0
# The re-ranker's role for adapter scoping: an adapter trained on the answer choice alone
# (train/answer_choice.py) answers for it and leaves the planner, extractor and writer on their weights.
ANSWER_ROLE = "answer"
EMPTY_LIKELIHOOD = -20.0  # the likelihood of a continuation that tokenises to nothing: never the best
TEMPLATE = "Context: {sentence}\nQuestion: {question}\nAnswer:"
TEMPLATE_VERSION = f"answer-likelihood@{hashlib.sha1(TEMPLATE.encode()).hexdigest()[:8]}"


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
    out = sorted((replace(c, score=c.score + LIKELIHOOD_WEIGHT * likelihood[c.text]) for c in candidates),
                 key=lambda c: -c.score)
    ctx.record(AnswerScored(template=TEMPLATE_VERSION, weight=LIKELIHOOD_WEIGHT, adapter=adapter, candidates=[
        ScoredCandidate(c.text, features=round(c.score - LIKELIHOOD_WEIGHT * likelihood[c.text], 4),
                        likelihood=round(likelihood[c.text], 4), quote=c.quote) for c in out]))
    return out
