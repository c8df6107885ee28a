"""The starter adapter's recipe as one run (`deepresearch train starter`): the answer + bridge choice trained
`parts` times on the same questions, each part with its own init and order, the parts averaged and the average cut
to a small rank.

    1. parts   train_choice_adapter (trainer.py) with --bridges and --train-seed N, N = 0 … parts − 1, in
               OUT/part-N/; a part whose summary.json is written is not trained again, so a run that was stopped
               resumes where it was
    2. soup    the mean of the parts' weight changes (adapters/soup.py: one training run's gain is a noisy draw,
               the mean of three removes part of it: session 46)
    3. cut     the soup cut to `rank` in `dtype` (the best rank-k weight change per module), OUT/adapter, whose
               metadata.json says what it was built from (`built_by`: the command, `origin`, each part's held-out
               top-1 before and after)

The questions are a QA set's train split: gold answers (the recipe of the first shipped starter) or questions
synthesized from documents alone (train/synth/, app/commands/train_synth.py), which need no gold answer at all.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from pydantic import BaseModel, Field

from ..adapters.registry import METADATA_FILE
from ..adapters.soup import CONFIG, build_soup, compress
from .trainer import ChoiceRun, ModelDir, Say, train_choice_adapter

SUMMARY = "summary.json"


class StarterError(ValueError):
    """A run that cannot go on as asked (the message is one line for the user)."""


class StarterRecipe(BaseModel):
    questions: Path  # a QA jsonl with a train split
    corpus: Path  # the corpus its questions are answered from
    out: Path
    origin: str  # what the questions are, for the adapter's metadata ("synthesized from …", "gold answers of …")
    parts: int = Field(3, ge=1)
    limit: int = 1200
    held_out: int = 200
    rank: int = 32
    dtype: str = "bf16"
    lr: float = 3e-4


def part_dir(recipe: StarterRecipe, n: int) -> Path:
    return recipe.out / f"part-{n}"


def _run(recipe: StarterRecipe, n: int) -> ChoiceRun:
    return ChoiceRun(questions=recipe.questions, corpus=recipe.corpus, out=part_dir(recipe, n), limit=recipe.limit,
                     held_out=recipe.held_out, bridges=True, lr=recipe.lr, seed=0, train_seed=n)


def _part(recipe: StarterRecipe, n: int, model_dir: ModelDir, say: Say, command: str) -> dict:
    folder, run = part_dir(recipe, n), _run(recipe, n)
    if (folder / SUMMARY).is_file() and (folder / "adapter" / METADATA_FILE).is_file():
        summary = json.loads((folder / SUMMARY).read_text())
        same = {k: v for k, v in run.settings().items() if k != "out"}
        if {k: v for k, v in summary.get("settings", {}).items() if k != "out"} != same:  # parts of one recipe
            raise StarterError(f"{folder} was trained with other questions or settings: give another --out")
        say(f"part {n + 1}/{recipe.parts}: trained before ({folder}), held-out top-1 "
            f"{summary.get('top1_base')} → {summary.get('top1_trained')}")
        return summary
    say(f"part {n + 1}/{recipe.parts}: training ({folder})")
    return train_choice_adapter(run, model_dir, say, f"{command}  # part {n}")


def build_starter(recipe: StarterRecipe, model_dir: ModelDir, say: Say, command: str) -> Path:
    """Steps 1-3 above; returns the adapter folder (OUT/adapter)."""
    start = time.perf_counter()
    summaries = [_part(recipe, n, model_dir, say, command) for n in range(recipe.parts)]
    adapters = [part_dir(recipe, n) / "adapter" for n in range(recipe.parts)]
    final = recipe.out / "adapter"
    shutil.rmtree(final, ignore_errors=True)
    soup = recipe.out / "soup"  # the average, removed once cut: the parts and OUT/adapter are what is kept
    averaged = len(adapters) > 1
    if averaged:
        say(build_soup(soup, [(a, 1 / len(adapters)) for a in adapters]))
    source = soup if averaged else adapters[0]
    source_rank = json.loads((source / CONFIG).read_text())["r"]
    if recipe.rank < source_rank:
        say(compress(source, final, recipe.rank, recipe.dtype))
    else:  # already that small: kept as it is
        shutil.copytree(source, final)
    shutil.rmtree(soup, ignore_errors=True)
    meta = json.loads((final / METADATA_FILE).read_text())
    meta.pop("from", None)  # the soup folder, removed above
    meta |= {"trainer": "answer-choice soup, compressed" if averaged else "answer-choice",
             "origin": f"answer and bridge choices trained {f'{recipe.parts} times' if averaged else 'once'} on "
                       f"{recipe.origin}{', averaged' if averaged else ''}, rank {min(recipe.rank, source_rank)}",
             "built_by": [command],
             "parts": [{"held_out": s.get("held_out"), "top1_base": s.get("top1_base"),
                        "top1_trained": s.get("top1_trained"),
                        "bridge_top1": s.get("bridge_top1_per_measure")} for s in summaries],
             "questions": str(recipe.questions), "corpus": str(recipe.corpus)}
    (final / METADATA_FILE).write_text(json.dumps(meta, indent=2))
    say(f"wrote {final} ({time.perf_counter() - start:.0f} s); try it: deepresearch ask --adapter {final} …, "
        f"or compare: deepresearch eval --adapter {final} …")
    return final
