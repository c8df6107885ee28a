"""The last hop of a multi-hop question: once a follow-up hop has searched the bridge, the answer is the span that
tells what the question still asks about the bridge ("place birth" of "Henry Edwards"), not the span the whole
question's words point at (often the bridge itself, or the first hop's other names).

The reader's features weigh words; the sentence that answers the last hop often says it in other words ("son of"
for "father", "wife" for "married"). So a hop run's candidates are re-scored by the sentence-embedding likeness
(MiniLM cosine, tools/embedding.py) of their sentence to "rest of the question + bridge", weighted by
agent.hop_likeness_weight, before the pool is cut to agent.answer_pool. The rest is the question's own words
(agent/reader/answers/hop_question.py): nothing here knows a dataset's phrasing.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING

from deepresearch.agent.reader import Candidate, best_first

from .state import PlanStep

if TYPE_CHECKING:
    from .context import ResearchContext

# Candidates re-scored before the cut: enough that a last-hop span ranked low by words can reach the pool.
LIKENESS_POOL = 64


def likeness_on(ctx: ResearchContext) -> bool:
    """The likeness is weighed (agent.hop_likeness_weight > 0) and an embedder is there to compute it."""
    return ctx.settings.hop_likeness_weight > 0 and ctx.toolbox.embed is not None


def widened_pool(ctx: ResearchContext, hops: list[PlanStep]) -> int:
    """How many candidates the writer ranks before the cut: more when a hop's likeness will re-score them."""
    return LIKENESS_POOL if hops and likeness_on(ctx) else ctx.settings.answer_pool


def hop_query(step: PlanStep) -> str:
    """What the hop's evidence is asked: the rest of the question, then the bridge it is about."""
    return f"{step.get('rest', '')} {step['bridge']}".strip()


async def by_last_hop(ctx: ResearchContext, candidates: list[Candidate], hop: PlanStep) -> list[Candidate]:
    """The candidates re-scored with their sentence's likeness to the hop's question, best first, cut to
    agent.answer_pool (unchanged but cut when the weight is 0 or no embedder loads)."""
    weight, keep = ctx.settings.hop_likeness_weight, ctx.settings.answer_pool
    if not likeness_on(ctx) or not candidates:
        return candidates[:keep]
    quotes = list(dict.fromkeys(c.quote for c in candidates))
    try:  # a second of CPU for ~64 sentences: off the event loop, so parallel runs go on
        query, *vectors = await asyncio.to_thread(ctx.toolbox.embed, [hop_query(hop), *quotes])
    except (RuntimeError, OSError):  # EmbeddingUnavailable (a RuntimeError): the features' order stands
        return candidates[:keep]
    like = {q: sum(a * b for a, b in zip(query, v, strict=True)) for q, v in zip(quotes, vectors, strict=True)}
    rescored = [replace(c, score=c.score + weight * like[c.quote]) for c in candidates]
    return best_first(rescored)[:keep]
