"""`deepresearch build ranker` (train/choice/ranker.py): the answer ranker's feature weights fitted on a pool's
train questions, printed with their cross-validated top-1; a missing pool is one line, exit 2."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from deepresearch.evals.data.dataset import bundled_dataset
from deepresearch.train.choice.ranker import FEATURES

from ..app.helpers import in_process_cli, one_line_failure


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    return in_process_cli(tmp_path, monkeypatch)


def test_fits_on_a_pool_and_prints_the_table_and_the_weights(cli):
    demo = bundled_dataset("demo")[0].parent  # a folder with questions.jsonl and corpus.jsonl, like the pool
    done = cli("build", "ranker", "--pool", demo, "--limit", 100)
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    # 52 since a unit's capitalised opening word that the evidence also writes in lower case is no name: "Hogeschool
    # is used in Belgium …" no longer offers "Hogeschool" (the gold of one question here, a common noun); 54 since a
    # "what kind of film" question is answered by class phrases ("documentary film", "musician")
    assert lines[0] == "99 questions with candidates; 54 with a gold candidate"
    assert lines[1:3] == ["| fold | weights | top-1 | top-5 |", "|---|---|---|---|"]
    row = re.compile(r"\| ([AB]) \| (current|fitted) \| (\d\.\d{3}) \| (\d\.\d{3}) \|")
    rows = [row.fullmatch(line) for line in lines[3:7]]
    assert [(r[1], r[2]) for r in rows] == [("A", "current"), ("A", "fitted"), ("B", "current"), ("B", "fitted")]
    assert lines[7].startswith("W = ") and len(lines) == 8
    weights = ast.literal_eval(lines[7].removeprefix("W = "))
    assert list(weights) == list(FEATURES) and all(isinstance(w, float) for w in weights.values())


def test_a_missing_pool_is_one_line(cli, tmp_path, monkeypatch):
    one_line_failure(cli("build", "ranker", "--pool", tmp_path / "nope"),
                     f"no QA pool at {tmp_path / 'nope'} (questions.jsonl and corpus.jsonl missing): pass --pool "
                     "DIR, a folder with questions.jsonl and corpus.jsonl")
    # by default the pool beside the repository, as scripts/fit_answer_ranker.py looked for it
    from deepresearch.evals.data import dataset

    monkeypatch.setattr(dataset, "pool_dir", lambda: tmp_path / "shared" / "data" / "pool")
    one_line_failure(cli("build", "ranker"), f"no QA pool at {tmp_path / 'shared' / 'data' / 'pool'} "
                     "(questions.jsonl and corpus.jsonl missing): pass --pool DIR, a folder with questions.jsonl "
                     "and corpus.jsonl")
