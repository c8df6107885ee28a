"""The option choice's training sets: undecided yes/no and "A or B" train questions, scored against the very
context the graph builds (agent/graph/option_scoring.py)."""

from __future__ import annotations

import json

from deepresearch.agent.graph.answer_form import answer_choices
from deepresearch.agent.graph.option_scoring import option_context
from deepresearch.agent.graph.shared_property import named_things
from deepresearch.evals.dataset import bundled_dataset
from deepresearch.evals.metrics import normalize_answer
from deepresearch.train.option_examples import option_examples
from deepresearch.train.simulated_evidence import SimulatedSearch


def test_undecided_option_questions_become_sets_of_their_options_under_the_graphs_context():
    questions, corpus = bundled_dataset("demo")
    search = SimulatedSearch(corpus)
    examples, decided = option_examples(questions, search, seed=0)
    rows = {q["question"]: q for q in map(json.loads, questions.open()) if q["split"] == "train"}
    with_options = [q for q in rows.values() if answer_choices(q["question"])]
    assert examples and decided and len(examples) + decided <= len(with_options)
    for ex in examples:
        q = rows[ex.question]  # train questions only
        choices = answer_choices(ex.question)
        assert [text for text, _, _ in ex.candidates] == choices and ex.learnable
        things = named_things(ex.question)[:2] if choices == ["yes", "no"] else choices
        context, _ = option_context(ex.question, choices, search.option_evidence(ex.question, things))
        assert {sentence for _, sentence, _ in ex.candidates} == {context}  # one context, no feature term
        assert all(f == 0.0 for _, _, f in ex.candidates)
        golds = {normalize_answer(a) for a in [q["answer"], *q.get("answer_aliases", [])]}
        assert [normalize_answer(c) in golds for c in choices] == list(ex.correct)
