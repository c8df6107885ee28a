"""How far the feature ranking's spans can reach: every free-form question of a split, its evidence the gold
documents alone (the best evidence a run can read), and the gold's rank among all the spans `rank_candidates` finds.

    .venv/bin/python docs/results/answer-pool-16/span_ceiling.py --split dev [--misses 40]

"none" = the gold (or an alias) is no span of any kind in its own documents, however many candidates are re-ranked.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
from pathlib import Path

from deepresearch.agent.graph.answer_form import answer_choices
from deepresearch.agent.graph.candidates import EvidenceSentence, rank_candidates
from deepresearch.agent.graph.reading import split_sentences
from deepresearch.evals.metrics import normalize_answer

POOL = Path(__file__).resolve().parents[4] / "shared/data/pool"
BUCKETS = ("top 5", "6-16", "17+", "none")


def bucket(rank: int | None) -> str:
    if rank is None:
        return "none"
    return "top 5" if rank < 5 else "6-16" if rank < 16 else "17+"


def main(args: argparse.Namespace) -> None:
    corpus = {d["id"]: d for d in map(json.loads, (POOL / "corpus.jsonl").open())}
    questions = [q for q in map(json.loads, (POOL / "questions.jsonl").open())
                 if q["split"] == args.split and answer_choices(q["question"]) is None]
    counts: collections.Counter[str] = collections.Counter()
    misses = []
    for q in questions:
        golds = {normalize_answer(a) for a in [q["answer"], *q.get("answer_aliases", [])]}
        sentences = [EvidenceSentence(text, rank, corpus[doc]["title"], rank > 0, f"doc{rank}", position=i)
                     for rank, doc in enumerate(q["gold_doc_ids"])
                     for i, text in enumerate(split_sentences(corpus[doc]["text"]))]
        spans = rank_candidates(q["question"], sentences, k=1000)
        rank = next((i for i, c in enumerate(spans) if normalize_answer(c.text) in golds), None)
        counts[bucket(rank)] += 1
        if rank is None:
            near = [c.text for c in spans if any(g in normalize_answer(c.text) or normalize_answer(c.text) in g
                                                 for g in golds)][:3]
            misses.append(f"{q['question'][:80]!r} gold {q['answer']!r}, spans holding part of it: {near}")
    print(f"{args.split}: {len(questions)} free-form questions; the gold's rank among the spans of its own documents:")
    for name in BUCKETS:
        print(f"  {name:6s} {counts[name]:4d}  ({counts[name] / len(questions):.0%})")
    print(f"\n{args.misses} of the {len(misses)} with no span (seed 0):")
    for line in random.Random(0).sample(misses, min(args.misses, len(misses))):
        print("  " + line)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="dev", choices=["dev", "train"])
    parser.add_argument("--misses", type=int, default=40)
    main(parser.parse_args())
