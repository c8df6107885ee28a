"""How likely the best candidate is right: what decides between answering and an honest "not found".

    confidence = σ(w_rel · relevance + w_score · feature score + w_margin · margin + b)

relevance: how much of the question the candidate's unit covers (relevance.py); feature score: the ranker's
score before the policy's likelihood (candidates.py: W · features); margin: how far it stands above the next
candidate by that score. A logistic fit of "the top candidate is right" on pool *train* questions, each over the
evidence the graph gathers (train/simulated_evidence.py), 798 answerable and 60 made unanswerable (`eval
unanswerable --split train`); the dev questions were not read. `dev/LOG.md` has the fit and its curve.

The threshold is a setting (agent.min_answer_confidence); its default answers when answering is worth more than
abstaining under the trainer's tiers: right 1, honest "not found" `tier_not_found`, wrong 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..answers.candidates import Candidate, W

WEIGHTS = {"relevance": 1.974, "score": 0.176, "margin": 0.631}
BIAS = -4.462
# A candidate alone in its pool counts as standing this far above the runner-up it does not have (as in the fit).
LONE_MARGIN = 3.0
# Below this share of the question a unit is not about it: its citation is not verified (relevance.py).
ABOUT = 0.25


def feature_score(candidate: Candidate) -> float:
    """The ranker's score of a candidate before the policy's likelihood was added."""
    return sum(W.get(name, 0.0) * value for name, value in candidate.features.items())


def answer_confidence(candidate: Candidate, others: Sequence[Candidate], relevance: float) -> float:
    """P(the candidate is right), by the fit above."""
    score = feature_score(candidate)
    rivals = [feature_score(c) for c in others if c is not candidate and c.text != candidate.text]
    margin = score - max(rivals) if rivals else LONE_MARGIN
    z = (WEIGHTS["relevance"] * relevance + WEIGHTS["score"] * score + WEIGHTS["margin"] * margin + BIAS)
    return 1.0 / (1.0 + math.exp(-z))
