"""Unanswerable questions made from an answerable set: each question's answer taken out of the corpus.

For every chosen question, its gold documents and every other document that holds its answer (as whole tokens,
normalised like EM) leave the corpus; the question's gold answer becomes "not found". A system that is honest
about what it read should then say "not found" to all of them. Only free-form questions are used: a yes/no or
"A or B" question names its own answers, so taking documents away does not make it unanswerable. A question
whose answer is in too many documents (a common word: "American") is skipped rather than gutting the corpus.
"""

from __future__ import annotations

import json
from pathlib import Path

from deepresearch.evals.data.dataset import DatasetError, load_corpus, load_questions, select_questions
from deepresearch.evals.scoring.metrics import NOT_FOUND, answer_in_text, is_yes_no
from pydantic import BaseModel


class UnanswerableSet(BaseModel):
    questions: Path
    corpus: Path
    kept: int  # questions made unanswerable
    skipped: int  # left out: a yes/no or comparison question, or an answer in too many documents
    removed_docs: int


def make_unanswerable(questions_path: Path, corpus_path: Path, out_dir: Path, *, split: str | None, limit: int,
                      seed: int = 0, max_docs_per_answer: int = 12) -> UnanswerableSet:
    questions = select_questions(load_questions(questions_path), split=split, seed=seed)
    docs = load_corpus(corpus_path)
    kept, removed, skipped = [], set(), 0
    for q in questions:
        if len(kept) == limit:
            break
        if is_yes_no(q.golds, q.yes_no) or q.type == "comparison" or answer_in_text([q.question], q.golds):
            skipped += 1
            continue
        holders = {d.id for d in docs if answer_in_text([f"{d.title}\n{d.text}"], q.golds)}
        if len(holders | set(q.gold_doc_ids)) > max_docs_per_answer:
            skipped += 1
            continue
        removed |= holders | set(q.gold_doc_ids)
        kept.append(q)
    if not kept:
        raise DatasetError(f"{questions_path}: no question could be made unanswerable")
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = [{**q.model_dump(mode="json", exclude={"answer_aliases", "gold_doc_ids", "yes_no"}),
             "answer": NOT_FOUND, "held_out_answer": q.answer, "held_out_docs": q.gold_doc_ids, "type": "unanswerable",
             "source_type": q.type} for q in kept]
    (out_dir / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with (out_dir / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for d in docs:
            if d.id not in removed:
                out.write(json.dumps(d.model_dump(mode="json"), ensure_ascii=False) + "\n")
    return UnanswerableSet(questions=out_dir / "questions.jsonl", corpus=out_dir / "corpus.jsonl", kept=len(kept),
                           skipped=skipped, removed_docs=len(removed))
