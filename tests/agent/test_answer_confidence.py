"""The answer's confidence: the evidence's fit, lowered when the policy reads the pick as unlikely (never raised)."""

from __future__ import annotations

import math

from deepresearch.agent.config import AgentSettings
from deepresearch.agent.reader import answer_confidence
from deepresearch.agent.reader.answers.candidates import Candidate
from deepresearch.agent.reader.trust.confidence import LL_TYPICAL, LL_WEIGHT

from .conftest import default_script, run
from .fakes import ScriptedModel

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


async def test_a_pick_the_policy_finds_unlikely_is_held_back(toolbox, store):
    """The same evidence and pick: answered when the model reads it as likely, "not found" when it reads every
    candidate as unlikely, at a threshold between the two confidences (agent/reader/trust/confidence.py)."""
    question = "Who wrote the first published algorithm for the engine?"

    async def judged(likelihood: float, threshold: float):
        model = ScriptedModel(default_script(("Ada Lovelace",)))
        model.scorer = lambda prompt, cand: likelihood  # every candidate alike: the features' order stands
        result = await run(model, toolbox, store, question=question,
                           settings=AgentSettings(min_answer_confidence=threshold))
        return result, store.events(result.run_id, "citation_check")[-1].payload["judgement"]

    _, sure = await judged(-0.1, 0.0)
    _, unsure = await judged(-8.0, 0.0)
    assert sure["candidate"] == unsure["candidate"] and unsure["confidence"] < sure["confidence"]
    between = (sure["confidence"] + unsure["confidence"]) / 2
    answered, _ = await judged(-0.1, between)
    held, judgement = await judged(-8.0, between)
    assert answered.answer == sure["candidate"] and held.answer == "not found" and judgement["abstained"]
    assert "Best guess held back" in held.report
