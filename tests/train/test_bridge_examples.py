"""The bridge choice's training sets (train/bridge_examples.py): the names the graph would offer for the hop,
each correct when searching it finds a gold document the question's own search did not."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from deepresearch.agent.graph.bridge_scoring import BRIDGE_TEMPLATE
from deepresearch.agent.graph.evidence import normalise
from deepresearch.agent.graph.follow_up import bridge_options
from deepresearch.evals.dataset import bundled_dataset
from deepresearch.train.bridge_examples import bridge_example
from deepresearch.train.simulated_evidence import SimulatedSearch

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
    script_path = Path(__file__).resolve().parents[2] / "scripts" / "train_answer_choice.py"
    spec = importlib.util.spec_from_file_location("train_answer_choice", script_path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    questions, corpus_path = bundled_dataset("demo")
    answers = script.examples(questions, corpus_path, limit=60, k=5, seed=0)
    held = {ex.question for ex in answers[:20]}
    bridges_held, bridges_train = script.bridge_sets(questions, corpus_path, 60, 0, None, held)
    assert bridges_held and bridges_train
    assert {ex.question for ex in bridges_held} <= held and not {ex.question for ex in bridges_train} & held
    assert all(ex.template == BRIDGE_TEMPLATE for ex in bridges_held + bridges_train)
