"""Information-gain reward (IGPO, at the level of a run): how much the run's evidence raised the policy's
own probability of the gold answer.

    information = max_g ℓ(g | E) − max_g ℓ(g | ∅)
    ℓ(g | E)    = mean_t log π(g_t | TEMPLATE(sentence=E, question=q), g_<t)

g ranges over the gold answer and its aliases (the policy's best reading of the gold, with and without
evidence; the max is taken on each side, so a rare alias that is merely unlikely without context cannot
inflate the gain). E is the run's findings' quotes in the order it found them, identical quotes once,
cut to EVIDENCE_CHARS at a word boundary (≈ 400 tokens for SmolLM2's tokenizer; a long-context prompt
would outweigh the question for a small model and slow scoring down). ∅ is the same template with an
empty context, so only the evidence differs. TEMPLATE is the answer re-ranker's
(agent/graph/answer_scoring.py): the quantity rewarded is the one the graph uses to pick the answer.

It is computed with `ChatModel.score`, the rollout's own model and the re-ranker's adapter (role answer),
so it works on the embedded engine and on vLLM alike. A backend that cannot score (ScoringUnsupported, or
any ModelError) leaves the term absent (None), not zero, like every reward term with no basis; so does a
question with no gold answer. A run with no findings gets 0: it raised nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from deepresearch.agent.graph.events import FindingMade, read_events
from deepresearch.agent.model.base import ModelError, ScoringUnsupported
from deepresearch.agent.reader import EMPTY_LIKELIHOOD, TEMPLATE

if TYPE_CHECKING:
    from deepresearch.agent.model.base import ChatModel
    from deepresearch.agent.trace.store import TraceStore

    from .questions import TrainQuestion

EVIDENCE_CHARS = 1600
NO_TOKENS = EMPTY_LIKELIHOOD  # ℓ of a gold that tokenised to nothing (the re-ranker's floor, never the best)


def evidence_text(quotes: Sequence[str], max_chars: int = EVIDENCE_CHARS) -> str:
    """The quotes in order, each once, joined into one context, cut at a word boundary to max_chars."""
    seen: list[str] = []
    for q in quotes:
        q = " ".join(q.split())  # one line: the template's "\nQuestion:" must stay the only line break
        if q and q not in seen:
            seen.append(q)
    text = " ".join(seen)
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars]
    return cut[: cut.rfind(" ")] if " " in cut else cut


def run_quotes(store: TraceStore, run_id: str) -> list[str]:
    return [str(e.finding.get("quote", "")) for e in read_events(store, run_id, FindingMade)]


def mean_logprob(lps: Sequence[float]) -> float:
    return sum(lps) / len(lps) if lps else NO_TOKENS


class InformationScorer:
    """The information term of runs, for one model and adapter (one per round: a new adapter is a new
    policy). The no-context baseline is scored once per question, each run's term once."""

    def __init__(self, model: ChatModel, adapter: str | None, max_chars: int = EVIDENCE_CHARS) -> None:
        self.model, self.adapter, self.max_chars = model, adapter, max_chars
        self.unsupported = False  # the backend said it cannot score: stop asking
        self._baselines: dict[str, float | None] = {}
        self._terms: dict[str, float | None] = {}

    async def best_likelihood(self, context: str, question: str, golds: Sequence[str]) -> float | None:
        """max_g ℓ(g | context); None when the backend cannot score."""
        if self.unsupported:
            return None
        prompt = TEMPLATE.format(sentence=context, question=question)
        try:
            scored = await self.model.score(prompt, [" " + g for g in golds], adapter=self.adapter)
        except ScoringUnsupported:
            self.unsupported = True
            return None
        except ModelError:  # e.g. the prompt does not fit: no basis for this run
            return None
        return max(mean_logprob(lps) for lps in scored)

    async def baseline(self, q: TrainQuestion) -> float | None:
        if q.question not in self._baselines:
            self._baselines[q.question] = await self.best_likelihood("", q.question, q.golds)
        return self._baselines[q.question]

    async def term(self, store: TraceStore, run_id: str, q: TrainQuestion) -> float | None:
        if run_id in self._terms:
            return self._terms[run_id]
        value: float | None = None
        if q.golds:
            base = await self.baseline(q)
            evidence = evidence_text(run_quotes(store, run_id), self.max_chars)
            if base is not None:
                with_evidence = await self.best_likelihood(evidence, q.question, q.golds) if evidence else base
                value = None if with_evidence is None else with_evidence - base
        self._terms[run_id] = value
        return value

    async def group_terms(self, store: TraceStore, run_ids: Sequence[str], q: TrainQuestion) -> list[float | None]:
        if q.golds:  # once, before the runs ask for it concurrently
            await self.baseline(q)
        return list(await asyncio.gather(*(self.term(store, rid, q) for rid in run_ids)))
