"""Does a trained *verifier* term pick the answer better than the trained likelihood alone? (session 51, issue 13)

    .venv/bin/python docs/results/answer-verifier-probe/probe.py --scorer likelihood|verifier [--out DIR]

The re-ranker scores each candidate span c of its evidence sentence (agent/graph/answer_scoring.py):

    likelihood:  s(c) = f(c) + mean_t log π(c_t | "Context: <sentence>\\nQuestion: <q>\\nAnswer:", c_<t)

A generative likelihood carries the model's prior over strings (short, frequent names read as likely). The
verifier adds a discriminative term read from the same packed row: after the candidate, the question "Is that
the answer?" and the log-odds of " yes" against " no" at the next position,

    verifier:    s(c) = likelihood s(c) + log π(" yes" | …, c, V) − log π(" no" | …, c, V)

Both are trained the same way (train/answer_choice.py: −log Σ_correct softmax s, one pass, lr 3e-4, batch 4,
seed 0, the answer sets only) on the pool's free-form train questions after the first 200 (simulated evidence,
the graph's pool of 5 by features); top-1 is reported on those 200 held out, before and after. The dev split is
never read.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "scripts"))

VERIFY = "\nIs that the answer?"
HELD_OUT, LIMIT, K = 200, 1200, 5


def verifier_scorer(base_cls):
    """The answer-choice scorer with the verifier's log-odds added to each candidate's score."""
    import torch
    from deepresearch.train.answer_choice import LIKELIHOOD_WEIGHT

    class VerifierScorer(base_cls):
        def scores(self, example):  # one packed forward, read twice: the likelihood and the verdict
            yes, no = self._ids(" yes")[0], self._ids(" no")[0]
            hidden, reads = self.packed_forward(example, after=self._ids(VERIFY))
            verdict = self.log_probs(hidden[[r for r, *_ in reads], [end for *_, end in reads]])
            features = torch.tensor([score for _, _, score in example.candidates])
            return (features + LIKELIHOOD_WEIGHT * torch.stack(self.likelihoods(hidden, reads))
                    + verdict[:, yes] - verdict[:, no])

    return VerifierScorer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scorer", choices=("likelihood", "verifier"), required=True)
    parser.add_argument("--out", type=Path, default=None, help="write the adapter and summary.json here")
    args = parser.parse_args()

    import train_answer_choice as script
    from deepresearch.agent.model.embedded_weights import embedded_model_dir
    from deepresearch.app.settings import load_settings
    from deepresearch.train import answer_choice as A

    start = time.perf_counter()
    data = script.examples(script.POOL / "questions.jsonl", script.POOL / "corpus.jsonl", LIMIT, K, 0)
    held_out, train = data[:HELD_OUT], data[HELD_OUT:]
    cls = A.ChoiceScorer if args.scorer == "likelihood" else verifier_scorer(A.ChoiceScorer)
    loaded = A.ChoiceScorer.load(embedded_model_dir(load_settings().cache_dir), seed=0)
    scorer = cls(loaded.policy, loaded.tokenizer, loaded.pad_id)
    base = A.top1_hits(scorer, held_out)
    print(f"{args.scorer}: held out {len(held_out)}, features' top-1 {sum(ex.correct[0] for ex in held_out)}, "
          f"base {base} ({time.perf_counter() - start:.0f} s)", flush=True)

    def progress(seen: int, total: int, loss: float) -> None:
        if seen % 40 < 4:
            print(f"  {seen}/{total}, loss {loss:.3f}, {time.perf_counter() - start:.0f} s", flush=True)

    stats = A.train_choice(scorer, train, lr=3e-4, batch=4, epochs=1, seed=0, progress=progress)
    trained = A.top1_hits(scorer, held_out)
    print(f"{args.scorer}: trained {trained} ({stats.examples} sets, {time.perf_counter() - start:.0f} s)")
    if args.out:
        summary = {"scorer": args.scorer, "held_out": len(held_out), "top1_base": base, "top1_trained": trained,
                   "learnable": stats.examples, "seconds": round(time.perf_counter() - start)}
        A.save_choice_adapter(scorer.policy, args.out / "adapter", {"trainer": "verifier-probe", **summary})
        (args.out / "summary.json").write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
