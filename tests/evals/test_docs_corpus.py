"""`deepresearch eval --docs FOLDER` / `--index NAME`: a folder of a person's files as the eval's corpus, gold
documents named by their paths inside it; bad input is one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from deepresearch.evals.data.dataset import DatasetError, EvalQuestion
from deepresearch.evals.data.docs_corpus import corpus_from_folder, resolve_gold_ids

from tests.evals.test_cli import _one_line_error, cli  # noqa: F401 - the CLI fixture


def _folder(tmp_path: Path) -> Path:
    docs = tmp_path / "notes"
    (docs / "pump").mkdir(parents=True)
    (docs / "pump" / "wiring.md").write_text("# Wiring\n\nThe master shut-off valve is wired to GPIO 24.\n")
    (docs / "stock.csv").write_text("part,qty\nVH400,2\n")
    (docs / "photo.jpg").write_bytes(b"\xff\xd8\xff")
    return docs


def test_the_folder_becomes_a_corpus_with_paths_as_ids(tmp_path: Path):
    path, skipped = corpus_from_folder(_folder(tmp_path), tmp_path / "out" / "corpus.jsonl", max_file_bytes=10**6)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert {r["id"] for r in rows} == {"pump/wiring.md", "stock.csv"}
    assert any("| VH400 | 2 |" in r["text"] for r in rows)
    assert skipped == []  # an unsupported type is not read at all, not "skipped"


def test_a_folder_with_nothing_readable_is_one_line(tmp_path: Path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match="no readable documents"):
        corpus_from_folder(tmp_path / "empty", tmp_path / "c.jsonl", max_file_bytes=10**6)


def test_gold_names_resolve_to_the_one_path_they_end():
    q = EvalQuestion(id="1", question="q?", answer="a", gold_doc_ids=["wiring.md", "x/a.md", "a.md", "none.md"])
    ids = {"docs/pump/wiring.md", "x/a.md", "y/a.md"}
    assert resolve_gold_ids([q], ids)[0].gold_doc_ids == ["docs/pump/wiring.md", "x/a.md", "a.md", "none.md"]


def test_cli_docs_runs_an_eval_over_the_folder(cli, tmp_path: Path):  # noqa: F811
    docs = _folder(tmp_path)
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(json.dumps({"id": "v", "question": "Which GPIO pin is the valve wired to?", "answer": "GPIO 24",
                                 "gold_doc_ids": ["pump/wiring.md"]}) + "\n")
    base = ["--questions", qfile, "--system", "closed-book", "--out", tmp_path / "o", "--docs"]
    _one_line_error(cli(*base, tmp_path / "nope"), "not a folder")
    _one_line_error(cli(*base, docs, "--corpus", qfile), "give one corpus")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "v", "question": "q?", "answer": "a", "gold_doc_ids": ["other.md"]}) + "\n")
    _one_line_error(cli("--questions", bad, "--system", "closed-book", "--out", tmp_path / "o2", "--docs", docs),
                    "gold doc id 'other.md' is not in the corpus")
    _one_line_error(cli("--questions", qfile, "--system", "closed-book", "--out", tmp_path / "o3", "--index", "nope"),
                    "no index named 'nope'")
