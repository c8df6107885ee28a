"""Grow the bundled demo dataset (deepresearch/demo/) from the QA pool beside the repository
(`deepresearch build demo`).

Keeps the demo's existing questions and paragraphs (the README's main job runs on them) and adds pool questions
of every type and source with their gold paragraphs: train questions from the pool's train split, dev questions
from its dev split but never one of the first 100 of the seed-0 order (the reference eval set), so a gate or
starter adapter chosen on the demo says nothing about that eval. Deterministic (seeded); the files stay under
1 MB together. The shipped demo is the original 60 questions and 600 paragraphs grown once with the defaults.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path

KEEP = ("id", "source", "question", "answer", "answer_aliases", "type", "gold_doc_ids", "split", "yes_no")
MAX_BYTES = 1_000_000
SEED = 20261122


class DemoTooLarge(ValueError):
    """The grown demo would not fit the package's size budget (the message is one line for the user)."""


def reference_eval_ids(dev: list[dict]) -> set[str]:
    """The first 100 dev questions of the seed-0 order (evals/dataset.select_questions)."""
    order = list(dev)
    random.Random(0).shuffle(order)
    return {q["id"] for q in order[:100]}


def stratified(questions: list[dict], n: int, rng: random.Random) -> list[dict]:
    """`n` questions taken in turn from every (source, type), each group in `rng`'s order."""
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


def _jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def grow_demo(pool: Path, demo: Path, train: int = 160, dev: int = 80) -> str:
    """Add `train` train and `dev` dev questions of `pool` (and their gold paragraphs) to the demo in `demo`,
    in place; returns the line that says what it wrote. DemoTooLarge (nothing written) past MAX_BYTES."""
    questions_pool = _jsonl(pool / "questions.jsonl")
    corpus = {d["id"]: d for d in _jsonl(pool / "corpus.jsonl")}
    demo_questions, demo_docs = _jsonl(demo / "questions.jsonl"), _jsonl(demo / "corpus.jsonl")
    have_q = {q["id"] for q in demo_questions}
    have_d = {d["id"] for d in demo_docs}
    dev_split = [q for q in questions_pool if q["split"] == "dev"]
    excluded = have_q | reference_eval_ids(dev_split)
    rng = random.Random(SEED)
    added = (stratified([q for q in questions_pool if q["split"] == "train" and q["id"] not in excluded], train, rng)
             + stratified([q for q in dev_split if q["id"] not in excluded], dev, rng))
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
        raise DemoTooLarge(f"the demo would be {size:,} bytes (limit {MAX_BYTES:,}); ask for fewer questions")
    (demo / "questions.jsonl").write_text(q_text, encoding="utf-8")
    (demo / "corpus.jsonl").write_text(d_text, encoding="utf-8")
    return f"demo: {len(questions)} questions, {len(docs)} paragraphs, {size:,} bytes"
