"""The re-ranker's top-1 over pool size k and likelihood weight w, on 200 held-out pool *train* questions.

    .venv/bin/python docs/results/answer-pool-16/grid.py OUT.json base train/starter_adapter [--pool 32]

The first 200 free-form train questions in seed-0 order: every part of the starter held them out. Their evidence
is simulated (train/simulated_evidence.py). Each candidate of the top --pool (16) by features is scored once per
model (its features and its mean log-likelihood); the top k of those are the top-k pool, so top-1 for every k and
w is read off the same scores.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))

QUESTIONS, KS, WEIGHTS = 200, (5, 8, 10, 16, 24, 32, 48, 64), (0.5, 1.0, 1.5, 2.0, 3.0, 5.0)


def score_all(models: list[str], pool: int = 16) -> dict[str, list[list[tuple[float, float, bool]]]]:
    """Per model ("base" or an adapter folder), per question, per candidate: (features, likelihood, correct)."""
    import torch
    import train_answer_choice as script
    from deepresearch.agent.model.embedded_weights import embedded_model_dir
    from deepresearch.app.settings import load_settings
    from deepresearch.train import answer_choice as A

    sets = script.examples(script.POOL / "questions.jsonl", script.POOL / "corpus.jsonl", QUESTIONS, pool, 0)
    model_dir = embedded_model_dir(load_settings().cache_dir)
    out = {}
    for name in models:
        # "base": a fresh adapter, whose B = 0 adds exactly nothing to the base model's scores
        scorer = A.ChoiceScorer.load(model_dir, None if name == "base" else Path(name))
        with torch.no_grad():
            out[name] = [[(c[2], (s - c[2]) / A.LIKELIHOOD_WEIGHT, ok)
                          for c, s, ok in zip(ex.candidates, scorer.scores(ex).tolist(), ex.correct, strict=True)]
                         for ex in sets]
        print(f"scored {name}", flush=True)
    return out


def top1(rows: list[list[tuple[float, float, bool]]], k: int, w: float) -> int:
    return sum(max(row[:k], key=lambda c: c[0] + w * c[1])[2] for row in rows if row)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("models", nargs="+", help='"base" or adapter folders')
    parser.add_argument("--pool", type=int, default=16, help="candidates scored per question (the largest k)")
    args = parser.parse_args()
    scores = score_all(args.models, args.pool)
    args.out.write_text(json.dumps(scores))
    for name, rows in scores.items():
        for k in (k for k in KS if k <= args.pool):
            grid = " ".join(f"w{w}:{top1(rows, k, w)}" for w in WEIGHTS)
            print(f"{name} k={k} gold in pool {sum(any(c[2] for c in row[:k]) for row in rows)} {grid}")


if __name__ == "__main__":
    main()
