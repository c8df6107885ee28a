"""`deepresearch build demo` (evals/data/demo_dataset.py): the bundled demo QA set is rebuilt byte for byte from the
pool beside the repository; a missing pool or an oversized demo is one line, exit 2, and nothing written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from deepresearch.evals.data.dataset import bundled_dataset, pool_dir

from ..app.helpers import in_process_cli, one_line_failure

SHIPPED = bundled_dataset("demo")[0].parent
ORIGINAL = {"questions.jsonl": 60, "corpus.jsonl": 600}  # the demo before it was grown: the files' first lines
needs_pool = pytest.mark.skipif(not (pool_dir() / "questions.jsonl").is_file(),
                                reason="the QA pool beside the repository (../shared/data/pool) is not here")


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    return in_process_cli(tmp_path, monkeypatch)


@pytest.fixture
def original_demo(tmp_path: Path) -> Path:
    folder = tmp_path / "demo"
    folder.mkdir()
    for name, lines in ORIGINAL.items():
        with (SHIPPED / name).open(encoding="utf-8") as shipped:
            (folder / name).write_text("".join(next(shipped) for _ in range(lines)), encoding="utf-8")
    return folder


@needs_pool
def test_the_shipped_demo_is_the_original_grown_once_from_the_pool(cli, original_demo):
    done = cli("build", "demo", "--demo", original_demo)
    assert done.exit_code == 0, done.output
    assert done.stdout.strip() == "demo: 300 questions, 1124 paragraphs, 758,376 bytes"
    for name in ORIGINAL:
        assert (original_demo / name).read_bytes() == (SHIPPED / name).read_bytes(), name


@needs_pool
def test_a_demo_past_one_megabyte_is_refused_and_nothing_written(cli, original_demo, tmp_path):
    before = tmp_path / "before"
    shutil.copytree(original_demo, before)
    done = cli("build", "demo", "--demo", original_demo, "--train", 5000)
    one_line_failure(done, done.stderr.strip().removeprefix("error: "))
    assert "(limit 1,000,000); ask for fewer questions" in done.stderr
    for name in ORIGINAL:
        assert (original_demo / name).read_bytes() == (before / name).read_bytes()


def test_a_missing_pool_or_demo_is_one_line(cli, tmp_path, original_demo, monkeypatch):
    from deepresearch.evals.data import dataset

    monkeypatch.setattr(dataset, "pool_dir", lambda: tmp_path / "no-pool")
    one_line_failure(cli("build", "demo", "--demo", original_demo),
                     f"no QA pool at {tmp_path / 'no-pool'} (questions.jsonl and corpus.jsonl missing): pass --pool "
                     "DIR, a folder with questions.jsonl and corpus.jsonl")
    one_line_failure(cli("build", "demo", "--pool", SHIPPED, "--demo", tmp_path / "empty"),
                     f"--demo: no questions.jsonl in {tmp_path / 'empty'}")
