"""Grow the bundled demo dataset (deepresearch/demo/) from the QA pool beside the repository.

    python scripts/build_demo_dataset.py [--pool ../shared/data/pool] [--train 160] [--dev 80]

Keeps the demo's existing questions and paragraphs (the README's main job runs on them) and adds pool
questions of every type and source with their gold paragraphs: train questions from the pool's train
split, dev questions from its dev split but never one of the first 100 of the seed-0 order (the
reference eval set, `docs/results/eval-pool-dev-100`), so a gate or starter adapter chosen on the demo
says nothing about that eval. Deterministic (seeded); the files stay under 1 MB together.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "deepresearch" / "demo"
KEEP = ("id", "source", "question", "answer", "answer_aliases", "type", "gold_doc_ids", "split", "yes_no")
MAX_BYTES = 1_000_000


def reference_eval_ids(dev: list[dict]) -> set[str]:
    """The first 100 dev questions of the seed-0 order (evals/dataset.select_questions)."""
    order = list(dev)
    random.Random(0).shuffle(order)
    return {q["id"] for q in order[:100]}


def stratified(questions: list[dict], n: int, rng: random.Random) -> list[dict]:
    by_kind: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for q in questions:
        by_kind[(q["source"], q["type"])].append(q)
    for group in by_kind.values():
        rng.shuffle(group)
    picked: list[dict] = []
    while len(picked) < n and any(by_kind.values()):
        for key in sorted(by_kind):
            if by_kind[key] and len(picked) < n:
                picked.append(by_kind[key].pop())
    return picked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", type=Path, default=ROOT.parent / "shared" / "data" / "pool")
    parser.add_argument("--train", type=int, default=160)
    parser.add_argument("--dev", type=int, default=80)
    args = parser.parse_args()
    pool = [json.loads(line) for line in (args.pool / "questions.jsonl").open()]
    corpus = {d["id"]: d for d in map(json.loads, (args.pool / "corpus.jsonl").open())}
    demo_questions = [json.loads(line) for line in (DEMO / "questions.jsonl").open()]
    demo_docs = [json.loads(line) for line in (DEMO / "corpus.jsonl").open()]
    have_q = {q["id"] for q in demo_questions}
    have_d = {d["id"] for d in demo_docs}
    dev = [q for q in pool if q["split"] == "dev"]
    excluded = have_q | reference_eval_ids(dev)
    rng = random.Random(20261122)
    added = (stratified([q for q in pool if q["split"] == "train" and q["id"] not in excluded], args.train, rng)
             + stratified([q for q in dev if q["id"] not in excluded], args.dev, rng))
    new_docs = []
    for q in added:
        for doc_id in q["gold_doc_ids"]:
            if doc_id not in have_d:
                have_d.add(doc_id)
                new_docs.append({k: corpus[doc_id][k] for k in ("id", "title", "text")})
    questions = demo_questions + [{k: q.get(k) for k in KEEP} for q in added]
    docs = demo_docs + new_docs
    q_text = "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions)
    d_text = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs)
    size = len(q_text.encode()) + len(d_text.encode())
    if size > MAX_BYTES:
        raise SystemExit(f"the demo would be {size:,} bytes (limit {MAX_BYTES:,}); ask for fewer questions")
    (DEMO / "questions.jsonl").write_text(q_text, encoding="utf-8")
    (DEMO / "corpus.jsonl").write_text(d_text, encoding="utf-8")
    print(f"demo: {len(questions)} questions, {len(docs)} paragraphs, {size:,} bytes")


if __name__ == "__main__":
    main()
