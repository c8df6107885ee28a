"""Training sets for the follow-up hop's bridge (agent/graph/bridge_scoring.py).

A set is the names offered as the bridge, each correct when searching it finds a gold document of the
question that was not read before the hop; the answer choice's exact loss (answer_choice.py) then
trains the adapter to score the names that lead on higher. Two sources of sets:

- simulated evidence (`bridge_example`, `deepresearch train choices --bridges`): the question's own
  search (simulated_evidence.py), then the names the graph would offer (follow_up.bridge_options);
- the loop's rollouts (`logged_bridge_examples`, `deepresearch train`): the names a run's hop offered, as
  its `decision` event logged them, each searched again with the rollouts' own search tool.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from deepresearch.agent.graph.events import BridgeChosen, read_events
from deepresearch.agent.graph.nodes.executor import SOURCES_PER_CALL
from deepresearch.agent.reader import BRIDGE_OPTIONS, BRIDGE_TEMPLATE, bridge_options, normalise

from .answer_choice import ChoiceExample
from .simulated_evidence import SimulatedSearch

if TYPE_CHECKING:
    from deepresearch.agent.trace.store import TraceStore
    from deepresearch.tools.toolbox import Toolbox


def bridge_example(search: SimulatedSearch, question: str, gold_doc_ids: Iterable[str],
                   offered: int = BRIDGE_OPTIONS) -> ChoiceExample | None:
    """The question's `offered` bridge names, each correct when its search finds a new gold document (None: no
    names)."""
    docs = search.search(question)
    seen, golds = {d[0] for d in docs}, set(gold_doc_ids)
    names = bridge_options(question, search.sentences(docs), {normalise(question)}, offered)
    if not names:
        return None
    correct = tuple(bool({d[0] for d in search.search(n.text)} & golds - seen) for n in names)
    return ChoiceExample(question, tuple((n.text, n.quote, n.score) for n in names), correct, BRIDGE_TEMPLATE)


class HopOutcomes:
    """The corpus documents a hop for a name would read: the first SOURCES_PER_CALL sources the search tool
    surfaces for it, as doc ids (the tool's, else `doc_id_for` of the URL). Each name is searched once."""

    def __init__(self, toolbox: Toolbox, doc_id_for: Callable[[str], str | None] | None = None):
        self.toolbox, self.doc_id_for = toolbox, doc_id_for
        self._found: dict[str, frozenset[str]] = {}
        self.searches = 0

    def doc_id(self, url_or_id: str) -> str:
        return (self.doc_id_for(url_or_id) if self.doc_id_for else None) or url_or_id

    async def read_by_hop(self, name: str) -> frozenset[str]:
        if name not in self._found:
            tool, surfaced = self.toolbox.find("search"), []
            if tool is not None:  # a toolbox without search: no hop could have read anything
                outcome = await self.toolbox.invoke("search", tool.args_from(name))
                self.searches += 1
                surfaced = tool.sources(outcome.output or {}) if outcome.ok else []
            self._found[name] = frozenset(s.doc_id or self.doc_id(s.url) for s in surfaced[:SOURCES_PER_CALL])
        return self._found[name]


async def logged_bridge_examples(store: TraceStore, runs: Iterable[tuple[str, str, Sequence[str]]],
                                 outcomes: HopOutcomes) -> list[ChoiceExample]:
    """The learnable bridge sets these runs' hops logged ((run id, question, gold doc ids)), once each: each
    offered name is correct when its search finds a gold document the run had not read before the hop."""
    seen: dict[tuple, ChoiceExample] = {}
    for run_id, question, gold_doc_ids in runs:
        if not gold_doc_ids:
            continue
        for event in read_events(store, run_id, BridgeChosen):
            names = event.candidates
            if len(names) < 2 or any(not c.quote for c in names):  # no choice, or logged before sentences were
                continue
            unread = set(gold_doc_ids) - {outcomes.doc_id(r) for r in event.read}
            correct = tuple([bool(await outcomes.read_by_hop(c.text) & unread) for c in names])
            ex = ChoiceExample(question, tuple((c.text, c.quote, c.features) for c in names), correct,
                               BRIDGE_TEMPLATE)
            if ex.learnable:
                seen.setdefault((ex.question, ex.candidates), ex)
    return list(seen.values())
