"""`deepresearch train choices` and `deepresearch adapters measure`: the answer re-ranker's (and the bridge hop's)
choice trained on a QA set's train questions with simulated evidence, and measured on held-out ones
(train/choice/trainer.py). Three such adapters, averaged and cut (`adapters soup`, `adapters compress`), are the
starter adapter the package ships."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import typer
from deepresearch.app.console import fail, say
from deepresearch.app.settings import get_settings

from .qa_pool import pool_or_demo

CREDITS = ("exact", "f1")
QA_HELP = "(default: ../shared/data/pool beside the repository, else the bundled demo set)"

CHOICES_EXAMPLES = """Examples:
  deepresearch train choices --out /tmp/choices                          (answer choice; pool or demo questions)
  deepresearch train choices --out /tmp/seed0 --held-out 200 --bridges --train-seed 0   (a starter part)
  deepresearch train choices --out /tmp/hq --source hotpotqa --credit f1 --epochs 2
  deepresearch eval --dataset demo --split dev --adapter /tmp/choices/adapter --system graph --out out/choices
The dev split is never read; the first --held-out train questions are measured, the rest train."""

MEASURE_EXAMPLES = """Examples:
  deepresearch adapters measure /tmp/soup /tmp/seed0/adapter --bridges
  deepresearch adapters measure /tmp/choices/adapter --held-out 100 --limit 600
Use the --held-out, --limit and --seed the adapters were trained with, so none of the measured questions trained."""


def embedded_weights() -> Path:
    """The embedded model's safetensors (converted from its GGUF on first use)."""
    from deepresearch.agent.model.embedded.loaders.packaged_model import embedded_model_dir

    return embedded_model_dir(get_settings().cache_dir)


def choices(
    out_dir: Path = typer.Option(..., "--out", help="writes OUT/adapter (peft files + metadata.json) and "
                                 "OUT/summary.json; with --epochs > 1 also OUT/epoch-N/adapter"),
    questions: Path | None = typer.Option(None, "--questions", help=f"QA jsonl with a train split {QA_HELP}"),
    corpus: Path | None = typer.Option(None, "--corpus", help=f"its corpus jsonl {QA_HELP}"),
    limit: int = typer.Option(1200, "--limit", help="train questions read (held-out ones included)"),
    held_out: int = typer.Option(100, "--held-out", help="the first N are only measured (top-1 before and after)"),
    candidates: int | None = typer.Option(None, "--candidates", help="the re-ranker's pool (default from settings: "
                                          "{settings.agent.answer_pool})"),
    positives_from: int = typer.Option(0, "--positives-from", metavar="N",
                                       help="training sets whose pool lacks the gold get it from the top N spans "
                                            "as one more candidate (0: off; held-out sets never do)"),
    bridges: bool = typer.Option(False, "--bridges", help="also train the follow-up hop's bridge choice on the "
                                 "same questions; the adapter then answers for both roles"),
    credit: str = typer.Option("exact", "--credit", help="what a training candidate earns: 1 if it is the gold, "
                               "else 0 (exact), or its token F1 against the gold (f1)"),
    epochs: int = typer.Option(1, "--epochs", help="passes over the training sets"),
    lr: float = typer.Option(3e-4, "--lr", help="AdamW step size"),
    batch: int = typer.Option(4, "--batch", help="candidate sets per step"),
    seed: int = typer.Option(0, "--seed", help="the question order, so which questions are held out"),
    train_seed: int | None = typer.Option(None, "--train-seed", help="the adapter's init and the training order "
                                          "(default: --seed); another value trains another adapter on the same "
                                          "questions, with the same ones held out"),
    sources: list[str] | None = typer.Option(None, "--source", metavar="NAME", help="train (and hold out) "
                                             "questions of this source dataset only, e.g. hotpotqa; repeatable"),
) -> None:
    """Train the answer re-ranker's LoRA adapter on QA train questions with simulated evidence; measure it."""
    from deepresearch.app.runtime import quiet_libraries

    quiet_libraries()  # before torch loads: OMP_WAIT_POLICY is read once
    from deepresearch.train.choice.trainer import ChoiceDataError, ChoiceRun, train_choice_adapter

    if credit not in CREDITS:
        raise fail(f"--credit must be {' or '.join(CREDITS)} (got {credit!r})")
    questions, corpus = pool_or_demo(questions, corpus)
    for path in (questions, corpus):
        if not path.is_file():
            raise fail(f"{path} not found (pass --questions/--corpus)")
    candidates = get_settings().agent.answer_pool if candidates is None else candidates
    if limit <= held_out or held_out < 0 or candidates < 2 or epochs < 1:
        raise fail("need --limit > --held-out ≥ 0, --candidates ≥ 2 and --epochs ≥ 1")
    if positives_from and positives_from <= candidates:
        raise fail(f"--positives-from must be 0 (off) or more than --candidates ({candidates})")
    run = ChoiceRun(questions=questions, corpus=corpus, out=out_dir, limit=limit, held_out=held_out,
                    candidates=candidates, positives_from=positives_from, bridges=bridges, credit=credit,
                    epochs=epochs, lr=lr, batch=batch, seed=seed, train_seed=train_seed, sources=sources or None)
    command = shlex.join(["deepresearch", *sys.argv[1:]])
    try:
        train_choice_adapter(run, embedded_weights, say, command)
    except ChoiceDataError as exc:
        raise fail(str(exc)) from None


def measure(
    adapters: list[Path] = typer.Argument(..., help="adapter folders (peft files + metadata.json)"),
    questions: Path | None = typer.Option(None, "--questions", help=f"QA jsonl with a train split {QA_HELP}"),
    corpus: Path | None = typer.Option(None, "--corpus", help=f"its corpus jsonl {QA_HELP}"),
    held_out: int = typer.Option(200, "--held-out", help="the held-out questions measured (as `train choices`)"),
    limit: int = typer.Option(1200, "--limit", help="train questions read (as `train choices`)"),
    seed: int = typer.Option(0, "--seed", help="the question order (as `train choices`)"),
    bridges: bool = typer.Option(False, "--bridges", help="also the held-out bridge top-1"),
) -> None:
    """Held-out answer top-1 (and the pick's F1) of each adapter, as `train choices` measures after a pass."""
    from deepresearch.app.runtime import quiet_libraries

    quiet_libraries()  # before torch loads: OMP_WAIT_POLICY is read once
    from deepresearch.train.choice.trainer import ChoiceQuestions, measure_adapters

    questions, corpus = pool_or_demo(questions, corpus)
    for path in (questions, corpus):
        if not path.is_file():
            raise fail(f"{path} not found (pass --questions/--corpus)")
    for path in adapters:
        if not (path / "adapter_config.json").is_file():
            raise fail(f"{path}: not an adapter folder (no adapter_config.json)")
    spec = ChoiceQuestions(questions=questions, corpus=corpus, limit=limit, held_out=held_out, seed=seed,
                           candidates=get_settings().agent.answer_pool)
    measure_adapters(adapters, spec, bridges, embedded_weights, say)
