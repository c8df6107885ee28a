"""The bridge choice's training sets (train/choice/bridge_examples.py): the names the graph would offer for the hop,
each correct when searching it finds a gold document the question's own search did not; from simulated
evidence, and from the hops rollouts logged (searched again with the real local-corpus tools)."""

from __future__ import annotations

import json
from pathlib import Path

from deepresearch.agent.graph.events import BridgeChosen, ScoredCandidate, log_event
from deepresearch.agent.reader import BRIDGE_TEMPLATE, bridge_options, normalise
from deepresearch.agent.trace.store import TraceStore
from deepresearch.evals.data.dataset import bundled_dataset
from deepresearch.tools.config import ToolSettings
from deepresearch.train.choice.bridge_examples import HopOutcomes, bridge_example, logged_bridge_examples
from deepresearch.train.choice.simulated_evidence import SimulatedSearch
from deepresearch.train.choice.trainer import ChoiceQuestions, answer_sets, bridge_sets

QUESTION = "In what year did the playwright who wrote The City Heiress die?"
DOCS = [
    ("heiress", "The City Heiress", "The City Heiress is a comedy by Aphra Behn, first staged at Dorset Garden."),
    *((f"other{i}", f"The City Heiress ({i})", f"The City Heiress is a title of year {i} reused by Dorset "
       f"Garden and Thomas Betterton.") for i in range(3)),
    ("behn", "Aphra Behn", "Aphra Behn was an English writer for the stage who died on 16 April 1689."),
    ("garden", "Dorset Garden", "Dorset Garden was a London theatre opened in 1671."),
    ("betterton", "Thomas Betterton", "Thomas Betterton was an actor and manager of Dorset Garden."),
]


def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"id": i, "title": t, "text": x}) + "\n" for i, t, x in DOCS))
    return path


def test_a_name_is_correct_when_its_search_finds_a_new_gold_document(tmp_path):
    search = SimulatedSearch(corpus(tmp_path))
    first = {doc_id for doc_id, _, _ in search.search(QUESTION)}
    assert "heiress" in first and "behn" not in first  # the question's own search misses the bridge's page
    ex = bridge_example(search, QUESTION, ["heiress", "behn"])
    names = [text for text, _, _ in ex.candidates]
    assert "Aphra Behn" in names and len(names) > 1 and ex.template == BRIDGE_TEMPLATE
    assert ex.correct == tuple(name == "Aphra Behn" for name in names) and ex.learnable
    # each name is scored after the sentence it was found in, with the bridge features' score
    offered = bridge_options(QUESTION, search.sentences(search.search(QUESTION)), {normalise(QUESTION)})
    assert ex.candidates == tuple((c.text, c.quote, c.score) for c in offered)
    # a gold document the first search already found is no reason to search a name
    assert not any(bridge_example(search, QUESTION, ["heiress"]).correct)


def test_bridge_sets_hold_out_the_questions_the_answer_sets_hold_out():
    questions, corpus_path = bundled_dataset("demo")
    spec = ChoiceQuestions(questions=questions, corpus=corpus_path, limit=60, candidates=5, seed=0)
    answers = answer_sets(spec)
    held = {ex.question for ex in answers[:20]}
    bridges_held, bridges_train = bridge_sets(spec, held)
    assert bridges_held and bridges_train
    assert {ex.question for ex in bridges_held} <= held and not {ex.question for ex in bridges_train} & held
    assert all(ex.template == BRIDGE_TEMPLATE for ex in bridges_held + bridges_train)


def hop(read: list[str], names: tuple[str, ...] = ("Dorset Garden", "Aphra Behn", "Thomas Betterton"),
        quote: str = "The City Heiress is a comedy by Aphra Behn, first staged at Dorset Garden.") -> BridgeChosen:
    """A hop's `decision` event as the graph logs it (follow_up.bridge_steps)."""
    return BridgeChosen(search=names[0], options=list(names), read=read, candidates=[
        ScoredCandidate(n, features=1.0 - i / 10, likelihood=0.0, quote=quote) for i, n in enumerate(names)])


async def test_logged_hops_become_sets_once_each_with_names_searched_by_the_rollouts_tools(tmp_path):
    from deepresearch.evals.data.dataset import load_corpus
    from deepresearch.evals.run.environment import eval_environment

    store = TraceStore(tmp_path / "traces.db")
    runs = {k: store.start_run(QUESTION, {}) for k in ("a", "b", "read-behn", "old", "one-name", "no-gold")}
    golds = ["heiress", "behn"]
    async with eval_environment(corpus(tmp_path), load_corpus(corpus(tmp_path)),
                                ToolSettings(data_dir=tmp_path / "data")) as env:
        hits = (await env.search_tool.invoke({"query": "Aphra Behn"})).output["hits"]
        behn_url = next(h["url"] for h in hits if h["doc_id"] == "behn")
        # a source read before the hop is logged by its doc id, else its address: both count as the document
        events = {"a": hop(["heiress"]), "b": hop(["heiress"]),
                  "read-behn": hop(["heiress", behn_url], names=("Aphra Behn", "Dorset Garden")),
                  "old": hop(["heiress"], quote=""), "one-name": hop(["heiress"], names=("Aphra Behn",)),
                  "no-gold": hop(["heiress"])}
        for key, event in events.items():
            log_event(store, runs[key], event)
        outcomes = HopOutcomes(env.toolbox, env.doc_id_for)
        examples = await logged_bridge_examples(store, [(runs[k], QUESTION, golds) for k in runs if k != "no-gold"]
                                                + [(runs["no-gold"], QUESTION, [])], outcomes)
        assert "behn" in await outcomes.read_by_hop("Aphra Behn")
    # Run b offered what run a did: one set. Behn's page already read: no name leads on, nothing to learn.
    # No sentences logged (an older trace), a single name, no gold documents: no set.
    assert len(examples) == 1
    ex = examples[0]
    assert ex.template == BRIDGE_TEMPLATE and ex.question == QUESTION
    assert [c[0] for c in ex.candidates] == ["Dorset Garden", "Aphra Behn", "Thomas Betterton"]
    assert ex.correct == (False, True, False) and ex.learnable
    assert ex.candidates[1][1:] == ("The City Heiress is a comedy by Aphra Behn, first staged at Dorset Garden.", 0.9)
    assert outcomes.searches == 3  # each name once, however many runs offered it
