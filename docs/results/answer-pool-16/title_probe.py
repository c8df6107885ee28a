"""Probe: the re-ranker's context with its source's title ("Title: sentence") against the sentence alone.

    TITLE=0 .venv/bin/python docs/results/answer-pool-16/title_probe.py
    TITLE=1 .venv/bin/python docs/results/answer-pool-16/title_probe.py

The same held-out split as the starter's parts (seed-0 order, the first 200 free-form train questions with
candidates), the answer sets only (no bridge sets), K = 5, one pass at lr 3e-4 from a fresh adapter (seed 0).
Prints the held-out top-1 before and after training.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))


def main() -> None:
    import train_answer_choice as script
    from deepresearch.agent.graph import candidates as C
    from deepresearch.agent.model.embedded_weights import embedded_model_dir
    from deepresearch.app.settings import load_settings
    from deepresearch.train import answer_choice as A
    from deepresearch.train.simulated_evidence import free_form_train_questions

    titled = os.environ.get("TITLE") == "1"
    search = script.simulated_search(script.POOL / "corpus.jsonl")
    data = []
    for q in free_form_train_questions(script.POOL / "questions.jsonl", 0)[:1200]:
        sentences, bridges = search.evidence(q["question"])
        title = {s.text: s.title for s in sentences}
        ranked = C.rank_candidates(q["question"], sentences, k=5, bridges=bridges)
        if not ranked:
            continue
        ex = A.ChoiceExample.of(q["question"], ranked, [q["answer"], *q.get("answer_aliases", [])])
        if titled:
            ex = A.ChoiceExample(ex.question, tuple((text, f"{title[s]}: {s}" if title.get(s) else s, f)
                                                    for text, s, f in ex.candidates), ex.correct)
        data.append(ex)
    held, train = data[:200], data[200:]
    model_dir = embedded_model_dir(load_settings().cache_dir)
    scorer = A.ChoiceScorer.load(model_dir, seed=0)
    print("titled" if titled else "plain", "held", len(held), "gold in pool", sum(any(e.correct) for e in held),
          "base top-1", A.top1_hits(scorer, held), flush=True)
    start = time.perf_counter()
    A.train_choice(scorer, train, lr=3e-4, batch=4, epochs=1, seed=0)
    print("trained top-1", A.top1_hits(scorer, held), f"({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
