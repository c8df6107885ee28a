"""The policy's likelihood of a candidate, weighed beside the rules' features: what the model is asked, how much
its answer counts, and which adapter role answers. The graph makes the calls (agent/graph/scoring.py); the trainer
scores the same prompts (train/answer_choice.py), so both hold to these.

The answer candidates (candidates.py) are re-ranked by

    score(c) = features(c) + LIKELIHOOD_WEIGHT · mean_t log π(c_t | "Context: <sentence> Question: <q> Answer:", c_<t)

The feature ranking finds spans of the right kind near the question's words; the
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

The follow-up hop's bridge names (options.bridge_options) are scored alike by an adapter whose metadata
names the role BRIDGE_ROLE,

    s(n) = f(n) + mean_t log π(n_t | BRIDGE_TEMPLATE(sentence(n), q), n_<t)       f: the bridge features

and the best one is searched. Which name leads on is known for a training question without running the
graph: searching it finds a gold document the question's own search did not (train/bridge_examples.py),
so the answer choice's exact loss trains this choice too. Without such an adapter the rule chooses.
"""

from __future__ import annotations

import hashlib

LIKELIHOOD_WEIGHT = 1.0
# The re-ranker's role for adapter scoping: an adapter trained on the answer choice alone
# (train/answer_choice.py) answers for it and leaves the planner, extractor and writer on their weights.
ANSWER_ROLE = "answer"
EMPTY_LIKELIHOOD = -20.0  # the likelihood of a continuation that tokenises to nothing: never the best
TEMPLATE = "Context: {sentence}\nQuestion: {question}\nAnswer:"
TEMPLATE_VERSION = f"answer-likelihood@{hashlib.sha1(TEMPLATE.encode()).hexdigest()[:8]}"

BRIDGE_ROLE = "bridge"
BRIDGE_TEMPLATE = "Context: {sentence}\nQuestion: {question}\nLook up:"
