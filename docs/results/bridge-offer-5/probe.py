"""How many bridge names to offer the follow-up hop: on the starter's 200 held-out train questions, how often
some offered name leads on (its search finds a gold document the question's own search did not), how often the
rule's pick does (the first name, what the base model's graph searches) and how often a trained adapter's does.

    .venv/bin/python docs/results/bridge-offer-5/probe.py train/starter_adapter

Every question's 8 best-ranked names are scored once (features, mean log-likelihood); the first k of them are
the k offered, so every k and likelihood weight w is read off the same scores. Evidence: train/simulated_evidence.py.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))

QUESTIONS, KS, WEIGHTS, MOST = 200, (3, 4, 5, 6, 8), (0.5, 1.0, 1.5, 2.0, 3.0), 8

Row = list[tuple[float, float, bool]]  # per name: (features, likelihood, leads on)


def scored_names(adapter: Path) -> list[Row]:
    import torch
    import train_answer_choice as script
    from deepresearch.agent.model.embedded_weights import embedded_model_dir
    from deepresearch.app.settings import load_settings
    from deepresearch.train import answer_choice as A
    from deepresearch.train.bridge_examples import bridge_example
    from deepresearch.train.simulated_evidence import free_form_train_questions

    search = script.simulated_search(script.POOL / "corpus.jsonl")
    sets = [ex for q in free_form_train_questions(script.POOL / "questions.jsonl", 0)[:QUESTIONS]
            if (ex := bridge_example(search, q["question"], q.get("gold_doc_ids", []), offered=MOST))]
    scorer = A.ChoiceScorer.load(embedded_model_dir(load_settings().cache_dir), adapter)
    with torch.no_grad():
        return [[(c[2], (s - c[2]) / A.LIKELIHOOD_WEIGHT, ok)
                 for c, s, ok in zip(ex.candidates, scorer.scores(ex).tolist(), ex.correct, strict=True)]
                for ex in sets]


def top(row: Row, n: int, w: float | None) -> bool:
    """Whether one of the n best names leads on, ranked by features + w · likelihood (w None: the rule's order)."""
    order = row if w is None else sorted(row, key=lambda c: -(c[0] + w * c[1]))
    return any(ok for _, _, ok in order[:n])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("adapter", type=Path, help="an adapter trained for the bridge role")
    rows = scored_names(parser.parse_args().adapter)
    print(f"{len(rows)} held-out questions with names; a name that leads on among the k offered, the rule's pick, "
          f"the adapter's pick at weight w:")
    print(f"{'k':>2} {'some':>5} {'rule':>5} " + " ".join(f"w={w:<4}" for w in WEIGHTS))
    for k in KS:
        first = [row[:k] for row in rows]
        print(f"{k:>2} {sum(top(r, k, None) for r in first):>5} {sum(top(r, 1, None) for r in first):>5} "
              + " ".join(f"{sum(top(r, 1, w) for r in first):>6}" for w in WEIGHTS))
    five = [row[:5] for row in rows]
    print(f"k=5, two hops instead of one: the rule's first two lead on for {sum(top(r, 2, None) for r in five)}, "
          f"the adapter's best two (w=1) for {sum(top(r, 2, 1.0) for r in five)}")


if __name__ == "__main__":
    main()
