"""Training sets for the follow-up hop's bridge (agent/graph/bridge_scoring.py), from simulated evidence.

For a free-form train question: its own search (train/simulated_evidence.py), the names the graph would
offer as the bridge after that search (follow_up.bridge_options), and for each name whether
searching it finds a gold document of the question that the question's own search did not. A set is
learnable when some names lead on and some do not; the answer choice's loss (train/answer_choice.py)
then trains the adapter to score the ones that do higher.
"""

from __future__ import annotations

from collections.abc import Iterable

from deepresearch.agent.graph.bridge_scoring import BRIDGE_TEMPLATE
from deepresearch.agent.graph.evidence import normalise
from deepresearch.agent.graph.follow_up import bridge_options

from .answer_choice import ChoiceExample
from .simulated_evidence import SimulatedSearch


def bridge_example(search: SimulatedSearch, question: str, gold_doc_ids: Iterable[str]) -> ChoiceExample | None:
    """The question's bridge names, each correct when its search finds a new gold document (None: no names)."""
    docs = search.search(question)
    seen, golds = {d[0] for d in docs}, set(gold_doc_ids)
    names = bridge_options(question, search.sentences(docs), {normalise(question)})
    if not names:
        return None
    correct = tuple(bool({d[0] for d in search.search(n.text)} & golds - seen) for n in names)
    return ChoiceExample(question, tuple((n.text, n.quote, n.score) for n in names), correct, BRIDGE_TEMPLATE)
