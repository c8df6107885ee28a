"""Training sets for the option choice (agent/graph/option_scoring.py): the pool's yes/no and "A or B" train
questions that the graph's rules leave undecided, with evidence simulated as the graph gathers it.

Each becomes a ChoiceExample whose candidates are the options, all scored against the same context (the
things' lead sentences, exactly as the graph builds it) with no feature term, so train/answer_choice.py's
exact loss and scorer train it unchanged. The dev split is never read.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from deepresearch.agent.graph.answer_form import YES_NO, answer_choices
from deepresearch.agent.graph.comparison import choose_option
from deepresearch.agent.graph.option_scoring import option_context
from deepresearch.agent.graph.shared_property import decide_shared, named_things
from deepresearch.evals.metrics import normalize_answer

from .answer_choice import ChoiceExample
from .simulated_evidence import SimulatedSearch


def option_examples(questions: Path, search: SimulatedSearch, seed: int) -> tuple[list[ChoiceExample], int]:
    """The learnable sets of the undecided option questions of the train split (shuffled with `seed`), and how
    many option questions the rules decided."""
    with Path(questions).open() as lines:
        rows = [q for q in map(json.loads, lines) if q.get("split") == "train" and answer_choices(q["question"])]
    random.Random(seed).shuffle(rows)
    out, decided = [], 0
    for q in rows:
        choices = answer_choices(q["question"]) or []
        yes_no = choices == YES_NO
        things = named_things(q["question"])[:2] if yes_no else choices
        sentences = search.option_evidence(q["question"], things)
        rule = decide_shared(q["question"], sentences) if yes_no else choose_option(q["question"], choices, sentences)
        if rule is not None:
            decided += 1
            continue
        context, _ = option_context(q["question"], choices, sentences)
        golds = {normalize_answer(a) for a in [q["answer"], *q.get("answer_aliases", [])]} - {""}
        example = ChoiceExample(q["question"], tuple((c, context, 0.0) for c in choices),
                                tuple(normalize_answer(c) in golds for c in choices))
        if context and example.learnable:
            out.append(example)
    return out, decided
