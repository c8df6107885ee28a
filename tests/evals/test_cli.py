"""`deepresearch eval` bad inputs: one clear line on stderr, exit code 2, before any model loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from deepresearch.app.commands.eval import _adapter_path, _systems, register
from typer.testing import CliRunner

from tests.evals.test_runner import write_questions


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("DEEPRESEARCH_DATA_DIR", str(tmp_path / "data"))
    from deepresearch.app import settings as app_settings

    monkeypatch.setattr(app_settings, "_current", None)
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        pass

    register(app)
    runner = CliRunner()
    return lambda *args: runner.invoke(app, ["eval", *map(str, args)])


@pytest.fixture
def qfile(tmp_path: Path) -> Path:
    return write_questions(tmp_path / "q.jsonl")


def _one_line_error(result, pattern: str) -> None:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert pattern in lines[0], lines[0]


def test_missing_required_options(cli, qfile: Path, tmp_path: Path) -> None:
    _one_line_error(cli("--system", "closed-book", "--out", tmp_path / "o"),
                    "--questions FILE or --dataset NAME is required")
    _one_line_error(cli("--questions", qfile, "--system", "closed-book"), "--out DIR is required")
    _one_line_error(cli("--questions", qfile, "--out", tmp_path / "o"), "--system is required")


def test_bad_values(cli, qfile: Path, tmp_path: Path) -> None:
    base = ["--questions", qfile, "--out", tmp_path / "o"]
    _one_line_error(cli(*base, "--system", "closed-book,rag"), "unknown system 'rag'")
    _one_line_error(cli(*base, "--system", "retrieve"), "system 'retrieve' searches a corpus: give --corpus FILE")
    _one_line_error(cli(*base, "--system", "closed-book", "--limit", "0"), "--limit must be at least 1")
    _one_line_error(cli(*base, "--system", "closed-book", "--concurrency", "0"), "--concurrency must be at least 1")
    _one_line_error(cli(*base, "--system", "closed-book", "--temperature", "9"), "--temperature must be between")
    _one_line_error(cli(*base, "--system", "closed-book", "--split", "test"), "no questions with split 'test'")


def test_bad_files(cli, tmp_path: Path) -> None:
    out = tmp_path / "o"
    _one_line_error(cli("--questions", tmp_path / "none.jsonl", "--system", "closed-book", "--out", out),
                    "none.jsonl: no such file")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "a", "question": "q?", "answer": "x"}) + "\n{oops\n")
    _one_line_error(cli("--questions", bad, "--system", "closed-book", "--out", out), "bad.jsonl:2: not valid JSON")
    qfile = write_questions(tmp_path / "q.jsonl")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "d1", "title": "t"}) + "\n")
    _one_line_error(cli("--questions", qfile, "--corpus", corpus, "--system", "retrieve", "--out", out),
                    "c.jsonl:1: field 'text': Field required")
    (tmp_path / "afile").write_text("")
    _one_line_error(cli("--questions", qfile, "--system", "closed-book", "--out", tmp_path / "afile"), "is a file")


def test_compare_and_report_bad_dirs(cli, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    _one_line_error(cli("compare", tmp_path / "nope", tmp_path / "empty"), "nope: not an eval directory")
    _one_line_error(cli("compare", tmp_path / "empty", tmp_path / "empty"), "no results")
    _one_line_error(cli("report", tmp_path / "empty"), "no results yet")
    _one_line_error(cli("report", tmp_path / "nope"), "not an eval directory")


def test_helpers(tmp_path: Path) -> None:
    assert _systems(["closed-book,retrieve", " graph "]) == ["closed-book", "retrieve", "graph"]
    (tmp_path / "adapters" / "v1").mkdir(parents=True)
    assert _adapter_path("v1", tmp_path / "adapters") == ("v1", tmp_path / "adapters" / "v1")
    assert _adapter_path(str(tmp_path / "adapters" / "v1"), tmp_path / "x") == ("v1", tmp_path / "adapters" / "v1")
    assert _adapter_path("served", tmp_path / "adapters") == ("served", None)
    assert _adapter_path(None, tmp_path) == (None, None)


def test_compare_systems_option_bad_input(cli, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    _one_line_error(cli("compare", tmp_path / "empty", tmp_path / "empty", "--systems", "graph"),
                    "expected SYS_A:SYS_B")


def test_dataset_option_bad_input(cli, tmp_path: Path, qfile: Path) -> None:
    out = tmp_path / "o"
    _one_line_error(cli("--dataset", "nope", "--system", "closed-book", "--out", out), "no bundled dataset 'nope'")
    _one_line_error(cli("--dataset", "demo", "--questions", qfile, "--system", "closed-book", "--out", out),
                    "drop --questions/--corpus")
    assert not out.exists()  # nothing started


def test_the_bundled_demo_dataset_is_complete() -> None:
    from deepresearch.evals.data.dataset import bundled_dataset, check_gold_ids, load_corpus, load_questions

    questions_path, corpus_path = bundled_dataset("demo")
    questions, corpus = load_questions(questions_path), load_corpus(corpus_path)
    check_gold_ids(questions, {d.id for d in corpus}, questions_path)  # every gold paragraph ships
    splits = {q.split for q in questions}
    assert len(questions) >= 300 and splits == {"train", "dev"}
    assert {q.type for q in questions} >= {"bridge", "comparison", "2hop", "3hop1"}  # every kind of question
    assert sum(q.split == "dev" for q in questions) >= 100
    assert questions_path.stat().st_size + corpus_path.stat().st_size < 1_000_000


def test_eval_answers_with_the_served_adapter_unless_told(tmp_path: Path) -> None:
    # The README's `eval … --out out/eval-trained   # the served adapter`: with no --adapter, the adapter the
    # registry serves (what `train` published), as `ask` answers; before, the embedded model ran the base.
    from deepresearch.agent.model.policy import AdapterChoice
    from deepresearch.app.commands.eval import answering_adapter
    from deepresearch.app.settings import load_settings
    from deepresearch.train.adapters.registry import AdapterRegistry

    settings = load_settings(data_dir=tmp_path)
    assert answering_adapter(None, settings) == (None, None, AdapterChoice.active())  # nothing published
    registry = AdapterRegistry(settings.paths.adapters)
    registry.path("grpo-0001").mkdir(parents=True)
    (registry.path("grpo-0001") / "adapter_config.json").write_text("{}")
    (registry.path("grpo-0001") / "metadata.json").write_text('{"roles": ["planner"]}')
    registry.set_current("grpo-0001", action="publish")
    name, folder, choice = answering_adapter(None, settings)
    assert name == "grpo-0001" and folder == settings.paths.adapters / "grpo-0001"
    assert choice == AdapterChoice.named("grpo-0001", frozenset({"planner"}))  # scoped as trained
    assert answering_adapter("base", settings) == (None, None, AdapterChoice.base())
    assert answering_adapter(None, load_settings(data_dir=tmp_path, model={"adapter": ""}))[2] == AdapterChoice.base()
    explicit = answering_adapter(str(folder), settings)  # a folder
    assert explicit[:2] == ("grpo-0001", folder)
