"""The follow-up hop's bridge, chosen by an adapter trained for it.

A multi-hop question names its answer through a bridge ("the playwright who wrote The City Heiress"),
and the graph makes one more search for the bridge entity among the names of its evidence
(follow_up.py). By rule that is the best-ranked name (candidates.BRIDGE_W). With an adapter whose
metadata names the role BRIDGE_ROLE, each of the offered names is scored like an answer candidate,

    s(n) = f(n) + mean_t log π(n_t | BRIDGE_TEMPLATE(sentence(n), q), n_<t)       f: the bridge features

and the best one is searched. Which name leads on is known for a training question without running the
graph: searching it finds a gold document the question's own search did not (train/bridge_examples.py),
so the answer choice's exact loss trains this choice too. Without such an adapter nothing changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deepresearch.agent.model.base import ModelError

from .answer_scoring import likelihoods
from .candidates import Candidate

if TYPE_CHECKING:
    from .context import ResearchContext

BRIDGE_ROLE = "bridge"
BRIDGE_TEMPLATE = "Context: {sentence}\nQuestion: {question}\nLook up:"


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
