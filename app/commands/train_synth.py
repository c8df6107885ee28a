"""`deepresearch train --index NAME` / `--corpus FILE|DIR` without `--questions`: questions synthesized from the
documents (train/synth/), and `train questions`, which shows what would be trained on without training.

The set is made once per corpus and settings and kept under <data dir>/train/synth/ (a resume trains on the same
questions); its served corpus (the held-out documents left out) is what the rollouts and the gate's dev split
search.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from deepresearch.app.console import err, fail, out
from deepresearch.app.settings import get_settings

if TYPE_CHECKING:
    from deepresearch.app.settings import Settings
    from deepresearch.train.config import SynthSettings
    from deepresearch.train.rounds.questions import TrainQuestion
    from deepresearch.train.synth.corpus import SynthCorpus
    from deepresearch.train.synth.synthesize import SynthPaths, SynthSet


@dataclass(frozen=True)
class SynthJob:
    items: list[TrainQuestion]  # the train split
    served: Path  # the corpus the rollouts search (held-out documents left out)
    questions: Path  # every synthesized question (a `split` each): the gate's dev split is read from it
    made: SynthSet


def open_corpus(settings: Settings, corpus: Path | None, index: str | None) -> SynthCorpus:
    """The documents to synthesize from: a named index, a corpus file or a folder; one clear line if unreadable."""
    from deepresearch.tools.index.ingest import IngestError
    from deepresearch.tools.index.store import IndexNotFound
    from deepresearch.train.synth.corpus import SynthCorpus

    try:
        if index is not None:
            from deepresearch.tools.index.registry import IndexRegistry

            registry = IndexRegistry(settings.tools)
            try:
                return SynthCorpus.from_index(registry.open(index), on_close=registry.close)
            except BaseException:
                registry.close()
                raise
        assert corpus is not None
        return SynthCorpus.from_path(corpus, max_file_bytes=settings.tools.index.max_file_bytes)
    except (IngestError, IndexNotFound) as exc:
        raise fail(str(exc)) from None


def synth_job(settings: Settings, cfg: SynthSettings, corpus: Path | None, index: str | None) -> SynthJob:
    from deepresearch.train.synth.synthesize import synthesized

    docs = open_corpus(settings, corpus, index)
    try:
        if len(docs) == 0:
            raise fail(f"{index or corpus}: no documents to synthesize questions from")
        made, paths = synthesized(settings.data_dir / "train" / "synth", docs, cfg)
    finally:
        docs.close()
    err.print(made.line(), markup=False, highlight=False)
    items = made.train_questions()
    if not items:
        raise fail(f"{index or corpus}: no question could be synthesized from its documents (see `deepresearch "
                   "train questions` for what was made and why it was dropped)")
    return SynthJob(items=items, served=paths.served, questions=paths.questions, made=made)


def show_samples(made: SynthSet, per_kind: int, seed: int = 0) -> str:
    """A few questions of each kind, with their answers and what they were made from."""
    rng = random.Random(seed)
    lines: list[str] = []
    for kind in ("one_hop", "two_hop", "comparison", "unanswerable"):
        items = [q for q in made.questions if q.type == kind]
        if not items:
            continue
        lines.append(f"{kind} ({len(items)}):")
        for q in rng.sample(items, min(per_kind, len(items))):
            held = f" (held out: {q.held_out_answer})" if q.held_out_answer else ""
            lines.append(f"  [{q.split}, {q.template}] {q.question} → {q.answer}{held}")
    return "\n".join(lines)


def questions(
    corpus: Path | None = typer.Option(None, "--corpus", help="a corpus jsonl or a folder of documents"),
    index: str | None = typer.Option(None, "--index", help="a local index"),
    total: int | None = typer.Option(None, "--total", help="questions to keep (default from settings: "
                                     "{settings.train.synth.questions})"),
    samples: int = typer.Option(4, "--samples", help="questions of each kind to show"),
    out_dir: Path | None = typer.Option(None, "--out", help="also write the set here (questions.jsonl, served.jsonl, "
                                        "synth.json)"),
) -> None:
    """Synthesize questions from documents and show them with the filters' statistics (no model, no training)."""
    if (corpus is None) == (index is None):
        raise fail("give the documents: --corpus FILE|DIR or --index NAME")
    if corpus is not None and not corpus.exists():
        raise fail(f"--corpus: no such file or folder: {corpus}")
    if total is not None and total < 4:
        raise fail(f"--total must be at least 4 (got {total})")
    from deepresearch.train.synth.synthesize import synthesize

    settings = get_settings()
    cfg = settings.train.synth
    if total is not None:
        cfg = cfg.model_copy(update={"questions": total})
    docs = open_corpus(settings, corpus, index)
    try:
        made = synthesize(docs, cfg)
        paths: SynthPaths | None = made.write(out_dir, docs) if out_dir is not None else None
    finally:
        docs.close()
    out.print(made.line(), markup=False, highlight=False)
    out.print(made.stats.table(), markup=False, highlight=False)
    out.print(show_samples(made, samples), markup=False, highlight=False)
    if paths is not None:
        out.print(f"written: {paths.questions}, {paths.served}, {paths.summary}", markup=False, highlight=False)


QUESTIONS_EXAMPLES = """Examples:
  deepresearch train questions --corpus ~/notes --samples 5
  deepresearch train questions --index mydocs --total 200 --out /tmp/synth"""
