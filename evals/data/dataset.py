"""The eval dataset format (see docs/evals.md) and a loader that says exactly what is wrong.

questions.jsonl — one JSON object a line:
    id, question, answer                        required, non-empty strings
    answer_aliases: [str]                       other accepted answers (default [])
    gold_doc_ids: [str]                         corpus ids a correct answer should cite (default [])
    split: str | null                           e.g. "train" / "dev" (default null)
    type, source: str | null                    used for breakdowns (default null)
    yes_no: bool                                counts by exact match only (also true when the
                                                answer itself is yes/no)
    any other field is kept and ignored.
corpus.jsonl — one JSON object a line: id, title, text (id and text non-empty).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

from deepresearch.evals.scoring.metrics import is_yes_no
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator


class DatasetError(ValueError):
    """A malformed dataset file; the message is one line: `file:line: what is wrong`."""


class EvalQuestion(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)
    answer_aliases: list[str] = Field(default_factory=list)
    gold_doc_ids: list[str] = Field(default_factory=list)
    split: str | None = None
    type: str | None = None
    source: str | None = None
    yes_no: bool = False

    @field_validator("id", "question", "answer")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @property
    def golds(self) -> list[str]:
        """Gold answer first, then aliases: what the metrics take as `golds`."""
        return [self.answer, *self.answer_aliases]

    @property
    def is_yes_no(self) -> bool:
        return is_yes_no(self.golds, self.yes_no)


class CorpusDoc(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
    title: str = ""
    text: str = Field(min_length=1)


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "record"
    return f"field '{where}': {first['msg']}"


def _records(path: Path) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each non-blank line; raise DatasetError on bad JSON."""
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
            if not isinstance(record, dict):
                raise DatasetError(f"{path}:{lineno}: expected a JSON object, got {type(record).__name__}")
            yield lineno, record


Record = TypeVar("Record", EvalQuestion, CorpusDoc)


def load_questions(path: Path | str) -> list[EvalQuestion]:
    """Read and validate a questions.jsonl file (ids unique, required fields present)."""
    return _load_unique(Path(path), EvalQuestion, "questions")


def load_corpus(path: Path | str) -> list[CorpusDoc]:
    """Read and validate a corpus.jsonl file (ids unique, text non-empty)."""
    return _load_unique(Path(path), CorpusDoc, "documents")


def _load_unique(path: Path, model: type[Record], what: str) -> list[Record]:
    """Every line validated as `model`, ids unique; a one-line DatasetError at the first problem."""
    records: list[Record] = []
    seen: dict[str, int] = {}
    for lineno, raw in _records(path):
        try:
            record = model.model_validate(raw)
        except ValidationError as exc:
            raise DatasetError(f"{path}:{lineno}: {_first_error(exc)}") from None
        if record.id in seen:
            raise DatasetError(f"{path}:{lineno}: duplicate id '{record.id}' (first on line {seen[record.id]})")
        seen[record.id] = lineno
        records.append(record)
    if not records:
        raise DatasetError(f"{path}: no {what} in file")
    return records


def check_gold_ids(questions: list[EvalQuestion], corpus_ids: set[str], questions_path: Path | str) -> None:
    """Every gold doc id must name a corpus document, or citation recall would be meaningless."""
    for q in questions:
        missing = [g for g in q.gold_doc_ids if g not in corpus_ids]
        if missing:
            raise DatasetError(
                f"{questions_path}: question '{q.id}': gold doc id '{missing[0]}' is not in the corpus"
            )


def select_questions(
    questions: list[EvalQuestion], split: str | None = None, limit: int | None = None, seed: int = 0
) -> list[EvalQuestion]:
    """Filter by split, shuffle deterministically with `seed`, keep the first `limit`.

    The order is a function of the file and the seed only, so `--limit 50` picks the same
    50 questions on every run (and a resumed run sees the same list).
    """
    chosen = [q for q in questions if split is None or q.split == split]
    if not chosen:
        present = sorted({q.split for q in questions if q.split is not None})
        raise DatasetError(
            f"no questions with split '{split}' (splits present: {', '.join(present) or 'none'})"
        )
    random.Random(seed).shuffle(chosen)
    return chosen if limit is None else chosen[:limit]


def write_subset(rows: list[dict], corpus_path: Path | str, out_dir: Path) -> tuple[Path, Path]:
    """Write `rows` (question records) and the corpus restricted to their candidate and gold documents
    (the HotpotQA distractor setting: a small world indexed in seconds) as questions.jsonl + corpus.jsonl."""
    wanted = {d for q in rows for d in [*q.get("candidate_doc_ids", []), *q.get("gold_doc_ids", [])]}
    out_dir.mkdir(parents=True, exist_ok=True)
    with (out_dir / "corpus.jsonl").open("w") as out, Path(corpus_path).open() as corpus:
        for line in corpus:
            if line.strip() and json.loads(line)["id"] in wanted:
                out.write(line)
    (out_dir / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in rows))
    return out_dir / "questions.jsonl", out_dir / "corpus.jsonl"


# Datasets that ship inside the package, usable by name (`--dataset demo`) on a fresh install.
BUNDLED_DATASETS = {
    "demo": "300 multi-hop pool questions of every type (200 train, 100 dev) with their 1,124 paragraphs",
}


def bundled_dataset(name: str) -> tuple[Path, Path]:
    """(questions.jsonl, corpus.jsonl) of a bundled dataset; DatasetError naming the choices otherwise."""
    from importlib import resources

    if name not in BUNDLED_DATASETS:
        raise DatasetError(f"no bundled dataset {name!r} (bundled: {', '.join(BUNDLED_DATASETS)})")
    folder = resources.files("deepresearch").joinpath(name)
    return Path(str(folder.joinpath("questions.jsonl"))), Path(str(folder.joinpath("corpus.jsonl")))


def pool_dir() -> Path:
    """Where maintainers keep the QA pool: ../shared/data/pool beside the repository (a fresh clone or an
    installed package has none)."""
    return Path(__file__).resolve().parents[3] / "shared" / "data" / "pool"
