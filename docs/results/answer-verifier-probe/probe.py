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
    from deepresearch.train.answer_choice import EMPTY_LIKELIHOOD, LIKELIHOOD_WEIGHT

    class VerifierScorer(base_cls):
        def scores(self, example):  # one packed forward, read twice: the likelihood and the verdict
            yes, no = self._ids(" yes")[0], self._ids(" no")[0]
            verify = self._ids(VERIFY)
            by_sentence: dict[str, list[int]] = {}
            for i, (_, sentence, _) in enumerate(example.candidates):
                by_sentence.setdefault(sentence, []).append(i)
            rows, reads = [], []  # reads: (row, predicting positions, targets, verdict position, candidate)
            for r, (sentence, members) in enumerate(by_sentence.items()):
                prompt = self._ids(example.template.format(sentence=sentence, question=example.question))
                ids, positions, segment = list(prompt), list(range(len(prompt))), [0] * len(prompt)
                for seg, i in enumerate(members, 1):
                    tail = self._ids(" " + example.candidates[i][0])
                    start = len(ids)
                    reads.append((r, [len(prompt) - 1, *range(start, start + len(tail) - 1)], tail,
                                  start + len(tail) + len(verify) - 1, i))
                    ids += tail + verify
                    positions += range(len(prompt), len(prompt) + len(tail) + len(verify))
                    segment += [seg] * (len(tail) + len(verify))
                rows.append((ids, positions, segment))
            width = max(len(ids) for ids, _, _ in rows)
            ids_t = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
            pos_t = torch.zeros((len(rows), width), dtype=torch.long)
            seg_t = torch.full((len(rows), width), -1, dtype=torch.long)
            for r, (ids, positions, segment) in enumerate(rows):
                ids_t[r, : len(ids)], pos_t[r, : len(ids)], seg_t[r, : len(ids)] = (
                    torch.tensor(ids), torch.tensor(positions), torch.tensor(segment))
            causal = torch.ones(width, width, dtype=torch.bool).tril()
            sees = (seg_t[:, :, None] == seg_t[:, None, :]) | (seg_t[:, None, :] == 0)
            mask = (causal & sees)[:, None]
            lm = self.policy.get_base_model() if hasattr(self.policy, "get_base_model") else self.policy
            hidden = lm.model(input_ids=ids_t, attention_mask=mask, position_ids=pos_t).last_hidden_state
            out = [torch.tensor(EMPTY_LIKELIHOOD)] * len(example.candidates)
            for r, predicting, targets, verdict, i in reads:
                if not targets:
                    continue
                logp = torch.log_softmax(lm.lm_head(hidden[r, predicting]).float(), -1)
                likelihood = logp.gather(-1, torch.tensor(targets)[:, None]).mean()
                odds = torch.log_softmax(lm.lm_head(hidden[r, verdict]).float(), -1)
                out[i] = LIKELIHOOD_WEIGHT * likelihood + odds[yes] - odds[no]
            features = torch.tensor([score for _, _, score in example.candidates])
            return features + torch.stack(out)

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
