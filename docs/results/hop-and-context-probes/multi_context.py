"""The answer candidate's likelihood read in every evidence sentence that holds it, not only its own.

    .venv/bin/python docs/results/hop-and-context-probes/multi_context.py base train/starter_adapter

The starter's 200 held-out train questions (seed 0; 198 have candidates), evidence simulated as the graph gathers
it (train/simulated_evidence.py), the pool of 16 by features. Each candidate is scored after the re-ranker's
template in its own sentence and in up to CONTEXTS - 1 more sentences of the evidence that contain it; the
likelihood term is then that of its own sentence (what the graph does), the max, the mean or the log-sum-exp
over them, or the mean of own and max. Prints top-1 of each per model.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))

QUESTIONS, POOL, CONTEXTS = 200, 16, 4
Candidate = tuple[float, list[float], bool]  # features, likelihood per context (own first), correct


def agg(lls: list[float], how: str) -> float:
    if how == "own":
        return lls[0]
    if how == "max":
        return max(lls)
    if how == "mean":
        return sum(lls) / len(lls)
    if how == "lse":
        return math.log(sum(math.exp(x) for x in lls))
    return 0.5 * (lls[0] + max(lls))  # "own+max"


def main() -> None:
    import torch
    import train_answer_choice as script
    from deepresearch.agent.graph import candidates as C
    from deepresearch.agent.model.embedded_weights import embedded_model_dir
    from deepresearch.app.settings import load_settings
    from deepresearch.train import answer_choice as A
    from deepresearch.train.simulated_evidence import free_form_train_questions

    search = script.simulated_search(script.POOL / "corpus.jsonl")
    sets = []  # per question: (question, [(text, contexts, features, correct)])
    for q in free_form_train_questions(script.POOL / "questions.jsonl", 0)[:QUESTIONS]:
        sents, bridges = search.evidence(q["question"])
        pool = C.rank_candidates(q["question"], sents, k=POOL, bridges=bridges)
        if not pool:
            continue
        ex = A.ChoiceExample.of(q["question"], pool, [q["answer"], *q.get("answer_aliases", [])])
        cands = []
        for (text, quote, feats), ok in zip(ex.candidates, ex.correct, strict=True):
            holding = [s.text for s in sents if text.lower() in s.text.lower()]
            cands.append((text, list(dict.fromkeys([quote, *holding]))[:CONTEXTS], feats, ok))
        sets.append((q["question"], cands))
    contexts = sum(len(c[1]) for _, cs in sets for c in cs) / sum(len(cs) for _, cs in sets)
    print(f"{len(sets)} questions; {contexts:.2f} contexts per candidate on average", flush=True)
    model_dir = embedded_model_dir(load_settings().cache_dir)
    for name in sys.argv[1:]:
        scorer = A.ChoiceScorer.load(model_dir, None if name == "base" else Path(name))
        rows: list[list[Candidate]] = []
        with torch.no_grad():
            for question, cands in sets:
                flat = [(t, ctx, 0.0) for t, ctxs, _, _ in cands for ctx in ctxs]
                lls = scorer.scores(A.ChoiceExample(question, tuple(flat), tuple(False for _ in flat))).tolist()
                row, i = [], 0
                for _, ctxs, feats, ok in cands:
                    row.append((feats, lls[i:i + len(ctxs)], ok))
                    i += len(ctxs)
                rows.append(row)
        print(f"{name:<24}" + "  ".join(
            f"{how} {sum(max(row, key=lambda c, h=how: c[0] + agg(c[1], h))[2] for row in rows)}"
            for how in ("own", "max", "mean", "lse", "own+max")), flush=True)


if __name__ == "__main__":
    main()
