"""`eval unanswerable`: questions whose answer was taken out of the corpus, gold "not found"."""

from __future__ import annotations

import json
from pathlib import Path

from deepresearch.evals.data.dataset import load_corpus, load_questions
from deepresearch.evals.data.unanswerable import make_unanswerable


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_answers_leave_the_corpus_and_choice_questions_are_skipped(tmp_path: Path):
    qs = _write(tmp_path / "q.jsonl", [
        {"id": "a", "question": "Who wrote The City Heiress?", "answer": "Aphra Behn", "gold_doc_ids": ["d1"]},
        {"id": "b", "question": "Were both A and B plays?", "answer": "yes", "gold_doc_ids": ["d2"]},
        {"id": "c", "question": "Which is older, X or Y?", "answer": "X", "type": "comparison"},
        {"id": "d", "question": "Where was Aphra Behn born?", "answer": "Kent", "gold_doc_ids": ["d3"]},
    ])
    corpus = _write(tmp_path / "c.jsonl", [
        {"id": "d1", "title": "The City Heiress", "text": "A play of 1682."},
        {"id": "d2", "title": "Plays", "text": "Both were plays."},
        {"id": "d3", "title": "Aphra Behn", "text": "Aphra Behn was born in Kent."},
        {"id": "d4", "title": "Writers", "text": "Among them Aphra Behn, of Kent."},
    ])
    made = make_unanswerable(qs, corpus, tmp_path / "out", split=None, limit=10)
    assert made.kept == 2 and made.skipped == 2
    questions = load_questions(made.questions)
    assert {q.id for q in questions} == {"a", "d"} and all(q.answer == "not found" for q in questions)
    assert {d.id for d in load_corpus(made.corpus)} == {"d2"}  # every document holding an answer is gone
