"""The JSONL loader: good files load, malformed ones fail with `file:line: what is wrong`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from deepresearch.evals.data.dataset import (
    DatasetError,
    check_gold_ids,
    load_corpus,
    load_questions,
    select_questions,
)

POOL = Path("/work/shared/data/pool")


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _q(i: int, **extra) -> str:
    record = {"id": f"q{i}", "question": f"question {i}?", "answer": f"answer {i}", **extra}
    return json.dumps(record)


def test_loads_minimal_and_full_records(tmp_path: Path) -> None:
    path = _write(tmp_path / "q.jsonl", [
        _q(1),
        "",
        _q(2, answer_aliases=["a2"], gold_doc_ids=["d1"], split="dev", type="bridge", source="x", extra=1),
        _q(3, answer="Yes"),
    ])
    qs = load_questions(path)
    assert [q.id for q in qs] == ["q1", "q2", "q3"]
    assert qs[1].golds == ["answer 2", "a2"]
    assert qs[1].split == "dev" and qs[1].type == "bridge"
    assert qs[2].is_yes_no and not qs[0].is_yes_no


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([_q(1), "{not json"], r"q\.jsonl:2: not valid JSON"),
        ([_q(1), "[1, 2]"], r"q\.jsonl:2: expected a JSON object, got list"),
        ([_q(1), json.dumps({"id": "q2", "question": "?"})], r"q\.jsonl:2: field 'answer': Field required"),
        ([json.dumps({"id": "q1", "question": "  ", "answer": "a"})], r"q\.jsonl:1: field 'question'"),
        ([_q(1), _q(2), _q(1)], r"q\.jsonl:3: duplicate id 'q1' \(first on line 1\)"),
        ([_q(1, gold_doc_ids="d1")], r"q\.jsonl:1: field 'gold_doc_ids': Input should be a valid list"),
        ([_q(1, yes_no="maybe")], r"q\.jsonl:1: field 'yes_no'"),
        ([""], r"q\.jsonl: no questions in file"),
    ],
)
def test_malformed_questions_name_file_and_line(tmp_path: Path, lines: list[str], message: str) -> None:
    path = _write(tmp_path / "q.jsonl", lines)
    with pytest.raises(DatasetError, match=message):
        load_questions(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such file"):
        load_questions(tmp_path / "absent.jsonl")


def test_corpus_errors(tmp_path: Path) -> None:
    good = json.dumps({"id": "d1", "title": "T", "text": "body"})
    assert [d.id for d in load_corpus(_write(tmp_path / "c.jsonl", [good]))] == ["d1"]
    with pytest.raises(DatasetError, match=r"c\.jsonl:2: duplicate id 'd1'"):
        load_corpus(_write(tmp_path / "c.jsonl", [good, good]))
    with pytest.raises(DatasetError, match=r"c\.jsonl:1: field 'text'"):
        load_corpus(_write(tmp_path / "c.jsonl", [json.dumps({"id": "d1", "title": "T", "text": ""})]))


def test_gold_ids_must_be_in_corpus(tmp_path: Path) -> None:
    qs = load_questions(_write(tmp_path / "q.jsonl", [_q(1, gold_doc_ids=["d1", "zz"])]))
    check_gold_ids(qs, {"d1", "zz"}, "q.jsonl")
    with pytest.raises(DatasetError, match="question 'q1': gold doc id 'zz' is not in the corpus"):
        check_gold_ids(qs, {"d1"}, "q.jsonl")


def test_select_filters_split_and_is_deterministic(tmp_path: Path) -> None:
    lines = [_q(i, split="dev" if i % 2 else "train") for i in range(40)]
    qs = load_questions(_write(tmp_path / "q.jsonl", lines))
    a = select_questions(qs, split="dev", limit=5, seed=7)
    b = select_questions(qs, split="dev", limit=5, seed=7)
    c = select_questions(qs, split="dev", limit=5, seed=8)
    assert [q.id for q in a] == [q.id for q in b]
    assert [q.id for q in a] != [q.id for q in c]
    assert all(q.split == "dev" for q in a) and len(a) == 5
    assert len(select_questions(qs, split=None)) == 40
    # a larger limit extends the smaller selection: resumed/extended evals stay consistent
    assert [q.id for q in select_questions(qs, "dev", 8, 7)][:5] == [q.id for q in a]
    with pytest.raises(DatasetError, match=r"no questions with split 'test' \(splits present: dev, train\)"):
        select_questions(qs, split="test")


@pytest.mark.skipif(not POOL.is_dir(), reason="shared pool data not present")
def test_pool_files_load_and_gold_ids_resolve() -> None:
    qs = load_questions(POOL / "questions.jsonl")
    corpus = load_corpus(POOL / "corpus.jsonl")
    assert len(qs) == 1666 and len(corpus) == 18341
    check_gold_ids(qs, {d.id for d in corpus}, POOL / "questions.jsonl")
    dev = select_questions(qs, split="dev", seed=0)
    assert len(dev) == 351
    assert sum(q.is_yes_no for q in qs) == 85
