"""`deepresearch train --index NAME` / `--corpus FILE|DIR` without `--questions` synthesizes its questions, and
`train questions` shows them; what is checked before any model loads."""

from __future__ import annotations

import json
from pathlib import Path

from .synth_docs import write_docs
from .test_cli import cli, data_dir, one_line_error  # noqa: F401 - fixtures

__all__ = ["cli", "data_dir"]


def test_train_questions_shows_the_filters_statistics_and_samples(cli, tmp_path):
    folder = write_docs(tmp_path / "docs")
    result = cli("train", "questions", "--corpus", folder, "--total", "24", "--samples", "2", "--out", tmp_path / "o")
    assert result.exit_code == 0, result.output
    assert ("| kind | made | answer_in_question | copies_source | wrong_kind | duplicate | common_opening | "
            "not_retrievable |") in result.stdout
    for kind in ("one_hop", "two_hop", "comparison", "unanswerable"):
        assert f"\n{kind} (" in result.stdout
    rows = [json.loads(line) for line in (tmp_path / "o" / "questions.jsonl").read_text().splitlines()]
    assert {r["type"] for r in rows} == {"one_hop", "two_hop", "comparison", "unanswerable"}
    one_line_error(cli("train", "questions"), "give the documents: --corpus FILE|DIR or --index NAME")
    one_line_error(cli("train", "questions", "--corpus", tmp_path / "none"), "--corpus: no such file or folder")
    one_line_error(cli("train", "questions", "--index", "nope"), "no index named 'nope'")


def test_train_on_a_folder_synthesizes_then_trains_on_its_served_corpus(cli, data_dir, tmp_path):
    folder = write_docs(tmp_path / "docs")
    one_line_error(cli("train", "--corpus", tmp_path / "none", "--no-gate"), "--corpus: no such file or folder")
    # Up to the model: synthesized (once), the gate's dev split resolved, then the resume check fails.
    result = cli("train", "--corpus", folder, "--resume")
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines[0].startswith("synthesized from 8 documents (1 held out for unanswerable ones)")
    assert lines[-1].startswith("error: --resume: no trainer checkpoint at")
    made = list((data_dir / "train" / "synth").iterdir())
    assert len(made) == 1
    served = [json.loads(line)["id"] for line in (made[0] / "served.jsonl").read_text().splitlines()]
    assert len(served) == 7
    assert any(json.loads(line)["split"] == "dev" for line in (made[0] / "questions.jsonl").read_text().splitlines())
    cli("train", "--corpus", folder, "--resume")
    assert list((data_dir / "train" / "synth").iterdir()) == made  # the same set, reused


def test_train_on_an_index_synthesizes_from_its_documents(cli, data_dir, tmp_path):
    from deepresearch.tools.config import ToolSettings
    from deepresearch.tools.index.build import index_paths
    from deepresearch.tools.index.registry import IndexRegistry

    registry = IndexRegistry(ToolSettings(data_dir=data_dir))
    index_paths(registry, "mine", [write_docs(tmp_path / "docs")])
    registry.close()
    result = cli("train", "--index", "mine", "--no-gate", "--resume")
    assert result.stderr.splitlines()[0].startswith("synthesized from 8 documents"), result.output
    one_line_error(cli("train", "--index", "nope", "--no-gate"), "no index named 'nope'")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.md").write_text("Nothing here to ask about.\n")
    result = cli("train", "--corpus", empty, "--no-gate")
    assert result.exit_code == 2 and "no question could be synthesized" in result.stderr


def test_a_question_file_and_the_logged_runs_stay_what_they_were(cli, tmp_path: Path):
    """--corpus with --questions serves a corpus file, as before: no synthesis, and a folder is not one."""
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(json.dumps({"id": "a", "question": "Who?", "answer": "Ada", "split": "train"}) + "\n")
    one_line_error(cli("train", "--questions", qfile, "--corpus", write_docs(tmp_path / "docs"), "--no-gate"),
                   "--corpus: no such file")
