"""Held-out top-1 of s = f + w * LL (features + w x the re-ranker's likelihood) for the base model and a trained
re-ranker adapter, at pools of K = 5 and K = 20 (session 37, section 8 of README.md).

    .venv/bin/python docs/results/answer-choice-dev-100/weight_probe.py ADAPTER_DIR 200

The held-out sets are the first N of scripts/train_answer_choice.py's questions (seed 0): the ones that
script measures and never trains on. ~20 min on 2 cores for N = 200.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))

import torch  # noqa: E402
from deepresearch.agent.model.embedded_weights import embedded_model_dir  # noqa: E402
from deepresearch.app.settings import load_settings  # noqa: E402
from deepresearch.train import answer_choice as A  # noqa: E402
from deepresearch.train.config import LoraSettings  # noqa: E402
from deepresearch.train.update import load_policy  # noqa: E402
from train_answer_choice import POOL, examples  # noqa: E402
from transformers import PreTrainedTokenizerFast  # noqa: E402

WEIGHTS = (0, 0.5, 1, 2, 4, 8, 1000)  # 0: features alone; 1000: the likelihood alone (features break ties)


def main() -> None:
    adapter, held = Path(sys.argv[1]), int(sys.argv[2])
    model_dir = embedded_model_dir(load_settings().cache_dir)
    tokenizer = PreTrainedTokenizerFast.from_pretrained(str(model_dir))
    for k in (5, 20):
        data = examples(POOL / "questions.jsonl", POOL / "corpus.jsonl", 1200, k, 0)[:held]
        features = [torch.tensor([c[2] for c in ex.candidates]) for ex in data]
        for name, path in (("base", None), ("trained", adapter)):
            policy = load_policy(model_dir, LoraSettings(), path, 0)
            policy.eval()
            scorer = A.ChoiceScorer(policy, tokenizer, int(policy.config.pad_token_id or 0))
            start = time.time()
            with torch.no_grad():
                likelihoods = [(scorer.scores(ex) - f) / A.LIKELIHOOD_WEIGHT
                               for ex, f in zip(data, features, strict=True)]
            top1 = {w: sum(ex.correct[int(torch.argmax(f + w * ll))]
                           for ex, f, ll in zip(data, features, likelihoods, strict=True)) for w in WEIGHTS}
            print(f"K {k} {name}: gold in pool {sum(any(ex.correct) for ex in data)} of {len(data)}; "
                  f"top-1 by weight {top1} ({time.time() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
