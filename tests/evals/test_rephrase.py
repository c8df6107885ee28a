"""`eval rephrase`: a question set asked the way people ask, each question's id, gold and documents kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from deepresearch.agent.reader.language.phrasing import direct_question
from deepresearch.evals.data.dataset import DatasetError, load_questions
from deepresearch.evals.data.rephrase import PHRASINGS, rephrase

from ..app.helpers import in_process_cli, one_line_failure

ROWS = [
    {"id": "a", "question": "What is the practice's fax number?", "answer": "(570) 555-0132", "gold_doc_ids": ["c.md"]},
    {"id": "b", "question": "Who runs the Monday puppy class?", "answer": "Bethany Crowther"},
    {"id": "c", "question": "Which is heavier, T03 or T04?", "answer": "T04", "type": "comparison"},
    {"id": "d", "question": "Is the hall free on the 14th?", "answer": "yes", "yes_no": True},
]


def _questions(tmp_path: Path) -> Path:
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def test_each_phrasing_keeps_ids_golds_and_documents(tmp_path: Path):
    for phrasing in PHRASINGS:
        made = rephrase(_questions(tmp_path), tmp_path / f"{phrasing}.jsonl", phrasing)
        rows = {q.id: q for q in load_questions(made.questions)}
        assert made.kept == len(rows) and made.kept + made.skipped == len(ROWS)
        for row in ROWS:
            if row["id"] in rows:
                q = rows[row["id"]]
                assert q.answer == row["answer"] and q.gold_doc_ids == row.get("gold_doc_ids", [])
                assert q.question != row["question"]


def test_requests_wrap_wh_questions_only_and_put_a_copula_last(tmp_path: Path):
    made = rephrase(_questions(tmp_path), tmp_path / "request.jsonl", "request")
    asked = {q.id: q.question for q in load_questions(made.questions)}
    assert asked == {"a": "Do you know what the practice's fax number is?",
                     "b": "Can you tell me who runs the Monday puppy class?"}  # "A or B" and yes/no left out
    # the reader reads the question inside the request (agent/reader/language/phrasing.py)
    assert direct_question(asked["a"]) == "What is the practice's fax number?"
    assert direct_question(asked["b"]) == ROWS[1]["question"]


def test_an_unknown_phrasing_or_a_set_with_no_question_of_its_shape_is_refused(tmp_path: Path):
    with pytest.raises(DatasetError, match="unknown phrasing 'shouting'"):
        rephrase(_questions(tmp_path), tmp_path / "x.jsonl", "shouting")
    only_yes_no = tmp_path / "yes_no.jsonl"
    only_yes_no.write_text(json.dumps(ROWS[3]) + "\n")
    with pytest.raises(DatasetError, match="no question has a shape"):
        rephrase(only_yes_no, tmp_path / "x.jsonl", "imperative")
    assert not (tmp_path / "x.jsonl").exists()


def test_the_command_writes_the_set_and_fails_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    run = in_process_cli(tmp_path, monkeypatch)
    result = run("eval", "rephrase", "--questions", _questions(tmp_path), "--out", tmp_path / "t.jsonl",
                 "--as", "thanks")
    assert result.exit_code == 0, result.output
    assert "4 questions asked as thanks" in result.stdout
    assert all(q.question.endswith("Thanks!") for q in load_questions(tmp_path / "t.jsonl"))
    one_line_failure(run("eval", "rephrase", "--questions", _questions(tmp_path), "--out", tmp_path / "u.jsonl",
                         "--as", "shouting"),
                     "unknown phrasing 'shouting': choose one of request, imperative, thanks, reason, lowercase, "
                     "keywords")
    one_line_failure(run("eval", "rephrase", "--questions", tmp_path / "missing.jsonl", "--out", tmp_path / "u.jsonl",
                         "--as", "thanks"), f"{tmp_path / 'missing.jsonl'}: no such file")


def test_the_command_takes_a_bundled_set_and_a_limit_and_names_its_corpus(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch):
    run = in_process_cli(tmp_path, monkeypatch)
    result = run("eval", "rephrase", "--dataset", "demo", "--as", "lowercase", "--limit", "3",
                 "--out", tmp_path / "l.jsonl")
    assert result.exit_code == 0, result.output
    assert len(load_questions(tmp_path / "l.jsonl")) == 3 and "its corpus: " in result.stdout
    one_line_failure(run("eval", "rephrase", "--as", "thanks", "--out", tmp_path / "u.jsonl"),
                     "--questions FILE or --dataset NAME is required")
    one_line_failure(run("eval", "rephrase", "--dataset", "demo", "--as", "thanks", "--limit", "0", "--out",
                         tmp_path / "u.jsonl"), "--limit must be at least 1 (got 0)")
    assert not (tmp_path / "u.jsonl").exists()


def test_keywords_keep_what_is_asked_about_and_drop_the_question_form(tmp_path: Path):
    made = rephrase(_questions(tmp_path), tmp_path / "k.jsonl", "keywords")
    asked = {q.id: q.question for q in load_questions(made.questions)}
    assert asked["a"] == "practice's fax number" and asked["b"] == "runs Monday puppy class"
    assert asked["c"] == "heavier, T03 T04"
