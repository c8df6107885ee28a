"""The answer's confidence: the evidence's fit, lowered when the policy reads the pick as unlikely (never raised)."""

from __future__ import annotations

import math

from deepresearch.agent.reader import answer_confidence
from deepresearch.agent.reader.answers.candidates import Candidate
from deepresearch.agent.reader.trust.confidence import LL_TYPICAL, LL_WEIGHT

FEATURES = {"relation": 1.0, "near": 1.0, "typed": 1.0}


def pick(likelihood: float | None) -> Candidate:
    return Candidate("1815", 5.0, "Ada Lovelace was born in 1815.", 0, "local://d1", features=FEATURES,
                     likelihood=likelihood)


def logit(p: float) -> float:
    return math.log(p / (1 - p))


def confidence(likelihood: float | None) -> float:
    rival = Candidate("1852", 2.0, "She died in 1852.", 1, "local://d1", features={"near": 1.0})
    best = pick(likelihood)
    return answer_confidence(best, [best, rival], relevance=0.6)


def test_an_unscored_pick_keeps_the_evidence_confidence():
    assert confidence(None) == confidence(LL_TYPICAL) == confidence(LL_TYPICAL + 5.0)  # a sure model raises nothing


def test_a_pick_the_policy_finds_unlikely_is_less_likely_right():
    lower = [confidence(LL_TYPICAL - d) for d in (0.5, 2.0, 6.0)]
    assert confidence(None) > lower[0] > lower[1] > lower[2]
    assert math.isclose(logit(confidence(None)) - logit(lower[1]), LL_WEIGHT * 2.0)  # the fit's term, in the logit
