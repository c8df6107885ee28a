"""`deepresearch train starter`: a starter adapter in one command (train/choice/starter_recipe.py): questions
synthesized from documents (no gold answer read) or a QA set's gold train split, several answer + bridge choice
adapters trained on them, averaged and cut. An interrupted run, given the same --out, resumes after its last
finished part."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import typer
from deepresearch.app.console import fail, say
from deepresearch.app.settings import get_settings

from .train_choices import embedded_weights

STARTER_EXAMPLES = """Examples:
  deepresearch train starter --corpus ../shared/data/pool/corpus.jsonl --total 800 --out /tmp/starter
      (label-free: questions synthesized from the corpus, no gold answer read)
  deepresearch train starter --index mynotes --out ~/notes-starter          (from a person's own documents)
  deepresearch train starter --questions qa.jsonl --corpus corpus.jsonl --out /tmp/gold-starter   (gold answers)
Then `deepresearch ask --adapter OUT/adapter …` or `deepresearch eval --adapter OUT/adapter …` to compare."""


def _train_questions(path: Path) -> int:
    """How many questions of a QA jsonl are in its train split (one clear line when it is not such a file)."""
    try:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise fail(f"{path}: not a QA jsonl ({exc.__class__.__name__}: {exc})") from None
    return sum(isinstance(r, dict) and r.get("split", "train") == "train" for r in rows)


def starter(
    out_dir: Path = typer.Option(..., "--out", help="writes OUT/adapter (the starter), OUT/part-N/ (each part)"),
    corpus: Path | None = typer.Option(None, "--corpus", help="without --questions: a corpus jsonl or a folder of "
                                       "documents to synthesize questions from; with --questions: its corpus"),
    index: str | None = typer.Option(None, "--index", help="a local index to synthesize questions from"),
    questions: Path | None = typer.Option(None, "--questions", help="a QA jsonl with a train split and gold "
                                          "answers, instead of synthesized questions"),
    total: int | None = typer.Option(None, "--total", help="questions to synthesize (default from settings: "
                                     "{settings.train.synth.questions})"),
    parts: int = typer.Option(3, "--parts", help="adapters trained and averaged"),
    limit: int = typer.Option(1200, "--limit", help="train questions read (held-out ones included)"),
    held_out: int | None = typer.Option(None, "--held-out", help="the first N are only measured (default: a "
                                        "tenth of the train questions, at most 200)"),
    rank: int = typer.Option(32, "--rank", help="the starter's rank (the parts' ranks add up in the average)"),
    dtype: str = typer.Option("bf16", "--dtype", help="fp32 | bf16"),
) -> None:
    """Build a starter adapter: answer + bridge choices trained several times, averaged and cut."""
    from deepresearch.app.runtime import quiet_libraries

    if questions is None and (corpus is None) == (index is None):
        raise fail("give the documents (--corpus FILE|DIR or --index NAME) or a QA set (--questions Q --corpus C)")
    if questions is not None and (corpus is None or index is not None):
        raise fail("--questions needs its --corpus (a jsonl), and no --index")
    for path in (questions, corpus):
        if path is not None and not path.exists():
            raise fail(f"no such file or folder: {path}")
    if parts < 1 or rank < 1 or limit < 2 or (total is not None and total < 4):
        raise fail("need --parts ≥ 1, --rank ≥ 1, --limit ≥ 2 and --total ≥ 4")
    if dtype not in ("fp32", "bf16"):
        raise fail(f"--dtype must be fp32 or bf16 (got {dtype!r})")
    quiet_libraries()  # before torch loads: OMP_WAIT_POLICY is read once
    from deepresearch.train.adapters.soup import SoupError
    from deepresearch.train.choice.starter_recipe import StarterError, StarterRecipe, build_starter
    from deepresearch.train.choice.trainer import ChoiceDataError

    settings = get_settings()
    if questions is None:
        from .train_synth import synth_job

        cfg = settings.train.synth if total is None else settings.train.synth.model_copy(update={"questions": total})
        job = synth_job(settings, cfg, corpus, index)
        questions, served = job.questions, job.served
        origin = f"{len(job.items)} questions synthesized from {index or corpus} (no gold answer read)"
    else:
        served = corpus
        origin = f"the gold answers of {questions}'s train split"
    assert served is not None
    n_train = min(_train_questions(questions), limit)
    held = min(200, n_train // 10) if held_out is None else held_out
    if not 0 <= held < n_train:
        raise fail(f"--held-out must be below the train questions read ({n_train})")
    recipe = StarterRecipe(questions=questions, corpus=served, out=out_dir, origin=origin, parts=parts, limit=limit,
                           held_out=held, rank=rank, dtype=dtype)
    command = shlex.join(["deepresearch", *sys.argv[1:]])
    try:
        build_starter(recipe, embedded_weights, say, command)
    except (ChoiceDataError, SoupError, StarterError) as exc:
        raise fail(str(exc)) from None
