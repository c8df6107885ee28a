"""Probe (session 36, issue 13): the yes/no and "A or B" answers the rules leave undecided, as a scored choice.

    .venv/bin/python docs/results/option-choice-probe/probe.py > log.txt

On the pool's *train* questions whose answer form is yes/no or "A or B" (the dev split is never read): evidence
as the graph would gather it (the question's search and one search per option or named thing, simulated over
the corpus), the graph's rules (comparison.py, shared_property.py) where they decide, and for the rest the
policy's likelihood of each option given both things' lead sentences, scored as the answer re-ranker scores a
span (train/answer_choice.py, no feature term). Two folds: the adapter trained with the exact choice loss on
one half, measured on the other after each pass, against the base model and against always answering the
first option ("yes" for yes/no).
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
from deepresearch.agent.graph import candidates as C  # noqa: E402
from deepresearch.agent.graph.answer_form import YES_NO, answer_choices  # noqa: E402
from deepresearch.agent.graph.comparison import choose_option, option_sentences  # noqa: E402
from deepresearch.agent.graph.evidence import split_sentences  # noqa: E402
from deepresearch.agent.graph.shared_property import decide_shared, named_things  # noqa: E402
from deepresearch.evals.metrics import normalize_answer  # noqa: E402
from deepresearch.train import answer_choice as A  # noqa: E402
from deepresearch.train.simulated_evidence import SimulatedSearch  # noqa: E402

POOL = Path(__file__).resolve().parents[4] / "shared/data/pool"


def evidence(search: SimulatedSearch, question: str, things: list[str]) -> list[C.EvidenceSentence]:
    docs, seen = [], set()
    for query in [question, *things]:
        for doc in search.search(query):
            if doc[0] not in seen:
                seen.add(doc[0])
                docs.append(doc)
    return [C.EvidenceSentence(s, rank, title, url=doc_id, position=k)
            for rank, (doc_id, title, text) in enumerate(docs) for k, s in enumerate(split_sentences(text))]


def undecided_examples() -> list[tuple[bool, A.ChoiceExample]]:
    rows = [json.loads(line) for line in (POOL / "questions.jsonl").open()]
    rows = [q for q in rows if q["split"] == "train" and answer_choices(q["question"]) is not None]
    random.Random(0).shuffle(rows)
    search = SimulatedSearch(POOL / "corpus.jsonl")
    out, decided, right = [], 0, 0
    for q in rows:
        choices = answer_choices(q["question"])
        yes_no = choices == YES_NO
        things = named_things(q["question"])[:2] if yes_no else choices
        sents = evidence(search, q["question"], things)
        rule = decide_shared(q["question"], sents) if yes_no else choose_option(q["question"], choices, sents)
        gold = normalize_answer(q["answer"])
        if rule is not None:
            decided, right = decided + 1, right + (normalize_answer(rule.option) == gold)
            continue
        leads = [own[0].text for t in things if (own := option_sentences(t, sents))]
        context = " ".join(leads) or (sents[0].text if sents else "")
        ex = A.ChoiceExample(q["question"], tuple((c, context, 0.0) for c in choices),
                             tuple(normalize_answer(c) == gold for c in choices))
        if ex.learnable:
            out.append((yes_no, ex))
    print(f"{len(rows)} train questions: {decided} decided by rule ({right} right), {len(rows) - decided} not, "
          f"{len(out)} of those with the gold among the options", flush=True)
    yes_no = [ex for y, ex in out if y]
    either = [ex for y, ex in out if not y]
    print(f"yes/no {len(yes_no)} (gold 'yes' {sum(ex.correct[0] for ex in yes_no)}), "
          f"A or B {len(either)} (gold the first {sum(ex.correct[0] for ex in either)})", flush=True)
    return out


def main() -> None:
    from deepresearch.agent.model.embedded_weights import embedded_model_dir
    from deepresearch.app.settings import load_settings
    from deepresearch.train.config import LoraSettings
    from deepresearch.train.update import load_policy
    from transformers import PreTrainedTokenizerFast

    examples = [ex for _, ex in undecided_examples()]
    model_dir = embedded_model_dir(load_settings().cache_dir)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(str(model_dir))
    half = len(examples) // 2
    for fold, (train, held) in enumerate([(examples[:half], examples[half:]), (examples[half:], examples[:half])]):
        torch.manual_seed(0)
        policy = load_policy(model_dir, LoraSettings(), None, 0)
        scorer = A.ChoiceScorer(policy, tokenizer, int(policy.config.pad_token_id or 0))
        policy.eval()
        base = A.top1_hits(scorer, held)
        first = sum(ex.correct[0] for ex in held)
        for epoch in (1, 2, 3):
            A.train_choice(scorer, train, lr=3e-4, batch=4, epochs=1, seed=epoch)
            print(f"fold {fold}: {len(held)} held out, base {base}, after pass {epoch} {A.top1_hits(scorer, held)}, "
                  f"first option {first}", flush=True)


if __name__ == "__main__":
    main()
