"""How likely the best candidate is right: what decides between answering and an honest "not found".

    confidence = σ(w_rel · relevance + w_score · feature score + w_margin · margin + b)

relevance: how much of the question the candidate's unit covers (relevance.py); feature score: the ranker's
score before the policy's likelihood (candidates.py: W · features); margin: how far it stands above the next
candidate by that score. A logistic fit of "the top candidate is right" on pool *train* questions, each over the
evidence the graph gathers (train/simulated_evidence.py), 798 answerable and 60 made unanswerable (`eval
unanswerable --split train`); the dev questions were not read. `dev/LOG.md` has the fit and its curve.

The policy's own reading lowers it: when the model re-ranked the candidates (graph/scoring.py), a pick whose mean
log-likelihood ll is below the typical pick's is less likely right,

    confidence = σ(z + w_ll · min(0, ll − LL_TYPICAL))

and a likely pick is not raised above what the evidence says (a sure model is often wrong: see below). Chosen on
pool *train* graph runs made with no threshold (session 74's: the base model on 176 train questions, the starter on
134 of the 200 it was not trained on) and replayed notes tuning sets (userdocs, -b, -c, -g); dev was not read. At
the threshold 0.09, right / wrong answers kept: starter 28 / 44 → 27 / 32, base 15 / 55 → 15 / 40, notes 52 / 20 →
52 / 18, 60 train questions made unanswerable 5 wrong both; w_ll 0.25 / 0.5 / 0.75 / 1 keeps 28 / 27 / 27 / 25 right
and 39 / 32 / 29 / 28 wrong (starter). Letting a high likelihood raise the confidence as well kept 28 / 37 (starter)
and 15 / 44 (base) on the same runs, and 58 / 21 on the notes (dev/LOG.md).

Two values have no confidence at all, however well they score: one labelled as another thing (its cell's column or its
line's key shares none of the words the question asks for and its unit names none of them: "Phone: (570) 555-0131" for
"what is the fax number", `label_other` in candidates.py), and one a note calls replaced ("threshold 40 % -> 25 %":
`stale`, document/recency.py), which the ranker only weighed down before. Measured with the reader alone (`eval
--system reader`) against the code without them: pool train 1,315 questions answered 668 → 663, right 169 = 169;
five fresh notes sets (-d -e -f -h -i, read in aggregate only) wrong answers shown verified 42 → 38, right 25 = 25
(dev/LOG.md, session 82).

The threshold is a setting (agent.min_answer_confidence); its default answers when answering is worth more than
abstaining under the trainer's tiers: right 1, honest "not found" `tier_not_found`, wrong 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..answers.candidates import Candidate, W

WEIGHTS = {"relevance": 1.974, "score": 0.176, "margin": 0.631}
BIAS = -4.462
# The policy's likelihood: the median pick's on those train runs, and how much a lower one lowers z.
LL_TYPICAL, LL_WEIGHT = -1.29, 0.5
# A candidate alone in its pool counts as standing this far above the runner-up it does not have (as in the fit).
LONE_MARGIN = 3.0
# Below this share of the question a unit is not about it: its citation is not verified (relevance.py).
ABOUT = 0.25


def feature_score(candidate: Candidate) -> float:
    """The ranker's score of a candidate before the policy's likelihood was added."""
    return sum(W.get(name, 0.0) * value for name, value in candidate.features.items())


def answer_confidence(candidate: Candidate, others: Sequence[Candidate], relevance: float) -> float:
    """P(the candidate is right), by the fit above (lowered by a low likelihood when the policy scored it)."""
    if candidate.features.get("label_other") or candidate.features.get("stale"):
        return 0.0  # labelled as another thing than the one asked, or a value a note calls replaced: no answer
    score = feature_score(candidate)
    rivals = [feature_score(c) for c in others if c is not candidate and c.text != candidate.text]
    margin = score - max(rivals) if rivals else LONE_MARGIN
    z = (WEIGHTS["relevance"] * relevance + WEIGHTS["score"] * score + WEIGHTS["margin"] * margin + BIAS)
    if candidate.likelihood is not None:
        z += LL_WEIGHT * min(0.0, candidate.likelihood - LL_TYPICAL)
    return 1.0 / (1.0 + math.exp(-z))
