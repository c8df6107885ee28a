"""Where the commands that build shipped artefacts find their questions by default: the maintainers' QA pool
beside the repository (../shared/data/pool), as the scripts they replace did."""

from __future__ import annotations

from pathlib import Path

from deepresearch.app.console import fail

POOL_FILES = ("questions.jsonl", "corpus.jsonl")


def pool_or_fail(pool: Path | None) -> Path:
    """--pool, else the pool beside the repository; one line and exit 2 when its files are not there."""
    from deepresearch.evals.data.dataset import pool_dir

    folder = pool if pool is not None else pool_dir()
    missing = [name for name in POOL_FILES if not (folder / name).is_file()]
    if missing:
        raise fail(f"no QA pool at {folder} ({' and '.join(missing)} missing): pass --pool DIR, a folder with "
                   f"{' and '.join(POOL_FILES)}")
    return folder


def pool_or_demo(questions: Path | None, corpus: Path | None) -> tuple[Path, Path]:
    """--questions / --corpus, each by default the pool's, else the bundled demo set's (a fresh clone has no
    pool beside it)."""
    from deepresearch.evals.data.dataset import bundled_dataset, pool_dir

    pool = pool_dir()
    default = ((pool / "questions.jsonl", pool / "corpus.jsonl") if (pool / "questions.jsonl").is_file()
               else bundled_dataset("demo"))
    return questions or default[0], corpus or default[1]
