"""Held-out train questions: the bridge chosen by features / the base model's likelihood / a trained adapter, then
the hop's evidence and the answer candidates' top 5 and top 1 by features (simulated evidence,
train/simulated_evidence.py; no graph run).

    .venv/bin/python docs/results/bridge-choice-loop/held_out_hops.py ADAPTER N [EXCLUDED_IDS_FILE]

The first N free-form train questions (seed 0: the held-out split of scripts/train_answer_choice.py), less the ids
listed in EXCLUDED_IDS_FILE (e.g. the questions a loop rolled out).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
POOL = Path(__file__).resolve().parents[4] / "shared/data/pool"


def main() -> None:
    import torch
    from deepresearch.agent.graph import candidates as C
    from deepresearch.agent.model.embedded_weights import embedded_model_dir
    from deepresearch.app.settings import load_settings
    from deepresearch.evals.metrics import normalize_answer
    from deepresearch.train.answer_choice import ChoiceScorer
    from deepresearch.train.bridge_examples import bridge_example
    from deepresearch.train.config import LoraSettings
    from deepresearch.train.simulated_evidence import SimulatedSearch, free_form_train_questions
    from deepresearch.train.update import load_policy
    from transformers import PreTrainedTokenizerFast

    adapter, n = Path(sys.argv[1]), int(sys.argv[2])
    excluded = set(Path(sys.argv[3]).read_text().split()) if len(sys.argv) > 3 else set()
    questions = [q for q in free_form_train_questions(POOL / "questions.jsonl", 0)[:n] if q["id"] not in excluded]
    print("questions", len(questions), "excluded", n - len(questions))
    search = SimulatedSearch(POOL / "corpus.jsonl")
    model_dir = embedded_model_dir(load_settings().cache_dir)
    policy = load_policy(model_dir, LoraSettings(), adapter, 0)
    policy.eval()
    tokenizer = PreTrainedTokenizerFast.from_pretrained(str(model_dir))
    scorer = ChoiceScorer(policy, tokenizer, int(policy.config.pad_token_id or 0))
    counts = {k: [0, 0, 0] for k in ("lead_on", "in5", "top1")}
    for q in questions:
        ex = bridge_example(search, q["question"], q["gold_doc_ids"])
        if ex is None:
            continue
        with torch.no_grad():
            trained = scorer.scores(ex).tolist()
            with policy.disable_adapter():
                base = scorer.scores(ex).tolist()
        features = [c[2] for c in ex.candidates]
        golds = {normalize_answer(a) for a in [q["answer"], *q.get("answer_aliases", [])]} - {""}
        docs = search.search(q["question"])
        seen, sentences = {d[0] for d in docs}, search.sentences(docs)
        for j, scores in enumerate((features, base, trained)):
            i = max(range(len(scores)), key=scores.__getitem__)
            name = ex.candidates[i][0]
            hop = [C.EvidenceSentence(s.text, s.source, s.title, hop=True, url=s.url, position=s.position)
                   for s in search.sentences([d for d in search.search(name) if d[0] not in seen])]
            ranked = C.rank_candidates(q["question"], sentences + hop, k=5, bridges=[name])
            right = [normalize_answer(c.text) in golds for c in ranked]
            counts["lead_on"][j] += ex.correct[i]
            counts["in5"][j] += any(right)
            counts["top1"][j] += bool(right) and right[0]
    print("features / base likelihood / trained:", counts)


if __name__ == "__main__":
    main()
