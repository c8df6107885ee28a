"""Train the answer re-ranker's adapter on a QA set's *train* questions, and measure it on held-out ones: how the
starter adapter's parts were made (`deepresearch train choices`; `deepresearch adapters measure`).

1. Free-form train questions (not yes/no, not "A or B"; shuffled with `seed`), their evidence simulated as the
   graph gathers it (simulated_evidence.py) and their top `candidates` spans by features: the re-ranker's pool
   (setting agent.answer_pool). `sources` keeps those source datasets' questions only.
2. The first `held_out` questions are only measured: top-1 (the re-ranker's pick is correct) for the base model,
   then for the adapter (0: every question trains, nothing is measured). The rest train it: −log Σ_correct
   softmax(s), `epochs` passes.
   `positives_from` N: a training set whose pool misses the gold gets the best correct span of the top N as one
   more candidate (session 36: held-out top-1 31 / 30 after passes 1 / 2, against 32 / 30 without: no gain).
   `bridges`: the follow-up hop's bridge names of the same questions train the same adapter (bridge_examples.py;
   session 43: held-out hops that find a new gold document 31 by features, 50 trained).
   `train_seed`: the adapter's init and training order only, so the same questions train (and are held out)
   another adapter (session 46: three such adapters, averaged, became the starter: adapters/soup.py).
   `credit` f1: a candidate earns its token F1 against the gold instead of 1 / 0 (answer_choice.py), so sets
   whose pool holds part of the gold train too. The held-out pick is reported by EM and by F1 either way.
3. Writes OUT/adapter (peft files + metadata.json scoped to the re-ranker's role, and `bridge` with `bridges`) and
   OUT/summary.json; with more than one epoch, also OUT/epoch-N/adapter and the held-out top-1 after every pass.
   The dev split is never read: `deepresearch eval --adapter OUT/adapter` measures it on dev questions.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import time
from collections.abc import Callable
from pathlib import Path

from deepresearch.agent.reader import RelevanceReader, answer_options, by_relevance
from pydantic import BaseModel

from .answer_choice import (
    ChoiceExample,
    ChoiceScorer,
    ChoiceTraining,
    Credit,
    save_choice_adapter,
    top1_hits,
    top1_rewards,
    train_choice,
)
from .bridge_examples import bridge_example
from .simulated_evidence import SimulatedSearch, free_form_train_questions

Say = Callable[[str], None]
ModelDir = Callable[[], Path]  # where the base model's weights are: asked once the sets are built (it may convert)


class ChoiceDataError(ValueError):
    """Too few questions with candidates for the run asked (the message is one line for the user)."""


class ChoiceQuestions(BaseModel):
    """Which questions become candidate sets: the first `limit` free-form train questions of `questions` in
    `seed`'s order (of `sources` only, when given), the first `held_out` of them measured only; each set the top
    `candidates` spans, plus the best correct one of the top `positives_from` for a training set that lacks it."""

    questions: Path
    corpus: Path
    limit: int = 1200
    held_out: int = 100
    candidates: int = 5
    positives_from: int = 0
    seed: int = 0
    sources: list[str] | None = None


class ChoiceRun(ChoiceQuestions):
    """One training: the sets above, then `epochs` passes of AdamW at `lr`, `batch` sets a step, from the adapter
    init and order of `train_seed` (None: `seed`); `bridges` adds the bridge hop's sets; `credit` what a training
    candidate earns. The field names are the command's options, as summary.json records them."""

    out: Path
    bridges: bool = False
    credit: Credit = "exact"
    epochs: int = 1
    lr: float = 3e-4
    batch: int = 4
    train_seed: int | None = None

    def settings(self) -> dict:
        """The options in the order summary.json has always listed them."""
        keys = ("questions", "corpus", "out", "limit", "held_out", "candidates", "positives_from", "bridges",
                "credit", "epochs", "lr", "batch", "seed", "train_seed", "sources")
        dumped = self.model_dump(mode="json")
        return {k: dumped[k] for k in keys}


@functools.cache
def simulated_search(corpus: Path) -> SimulatedSearch:
    """The corpus indexed once per process (the answer and the bridge sets search the same one)."""
    return SimulatedSearch(corpus)


def answer_sets(spec: ChoiceQuestions, credit: Credit = "exact") -> list[ChoiceExample]:
    """One ChoiceExample per question with candidates: the top k spans by features. With `positives_from` N > k,
    every set after the first `held_out` whose k spans miss the gold also gets the best-ranked correct span of the
    top N, as a k+1-th candidate. `credit` "f1" grades each candidate by its token F1 against the gold."""
    k, positives_from = spec.candidates, spec.positives_from
    chosen = free_form_train_questions(spec.questions, spec.seed, spec.sources)[: spec.limit]
    if not chosen:  # indexing the corpus takes seconds: not for a source with no questions
        return []
    search = simulated_search(spec.corpus)
    out = []
    for q in chosen:
        sents, bridges = search.evidence(q["question"])
        golds = [q["answer"], *q.get("answer_aliases", [])]
        ranked = answer_options(q["question"], sents, pool=max(k, positives_from), bridges=bridges).candidates
        reader = RelevanceReader(q["question"], sents)
        pool = by_relevance(ranked[:k], reader)  # the order the graph's writer gives the policy
        correct = ChoiceExample.of(q["question"], ranked, golds).correct
        if positives_from > k and len(out) >= spec.held_out and not any(correct[:k]) and any(correct):
            pool += by_relevance([ranked[correct.index(True)]], reader)  # the best-ranked correct span below the pool
        if pool:
            out.append(ChoiceExample.of(q["question"], pool, golds, credit))
    return out


def bridge_sets(spec: ChoiceQuestions, held_out: set[str]) -> tuple[list[ChoiceExample], list[ChoiceExample]]:
    """(held-out, train) bridge sets (bridge_examples.py) of the same questions as the answer sets: a question
    held out there is held out here."""
    search = simulated_search(spec.corpus)
    sets = [ex for q in free_form_train_questions(spec.questions, spec.seed, spec.sources)[: spec.limit]
            if (ex := bridge_example(search, q["question"], q.get("gold_doc_ids", [])))]
    return [ex for ex in sets if ex.question in held_out], [ex for ex in sets if ex.question not in held_out]


def held_out_answer_sets(spec: ChoiceQuestions) -> list[ChoiceExample]:
    """The held-out answer sets, graded by F1 (so the pick's F1 can be read); ChoiceDataError when there are not
    more questions with candidates than `held_out` (nothing would be left to train on)."""
    data = answer_sets(spec, credit="f1")
    if len(data) <= spec.held_out:
        of_sources = f" of source {', '.join(spec.sources)}" if spec.sources else ""
        raise ChoiceDataError(f"{len(data)} free-form train questions with candidates{of_sources}; "
                              f"need more than --held-out {spec.held_out}")
    return data


def train_choice_adapter(run: ChoiceRun, model_dir: ModelDir, say: Say, command: str) -> dict:
    """Steps 1-3 above on the model in `model_dir()`; `say` gets each progress line; returns summary.json's
    content (`command` is recorded in it)."""
    from deepresearch.agent.reader import ANSWER_ROLE, BRIDGE_ROLE

    start = time.perf_counter()
    # graded by F1 throughout, so the held-out pick's F1 can be read; the training sets keep it only with credit f1
    data = held_out_answer_sets(run)
    held_out, train = data[: run.held_out], data[run.held_out:]
    if run.credit == "exact":
        train = [dataclasses.replace(ex, credit=None) for ex in train]
    say(f"{len(data)} questions with candidates ({time.perf_counter() - start:.0f} s); held out {len(held_out)}, "
        f"{sum(ex.correct[0] for ex in held_out)} right by features alone; "
        f"train {len(train)}, {sum(ex.learnable for ex in train)} with "
        f"{'a candidate of some F1' if run.credit == 'f1' else 'a correct candidate'}")
    bridges_held, bridges_train = (bridge_sets(run, {ex.question for ex in held_out}) if run.bridges else ([], []))
    if run.bridges:
        say(f"bridge sets: held out {len(bridges_held)}, the features' name leads on for "
            f"{sum(ex.correct[0] for ex in bridges_held)}, some name for "
            f"{sum(any(ex.correct) for ex in bridges_held)}; "
            f"train {len(bridges_train)}, {sum(ex.learnable for ex in bridges_train)} where a name leads on")

    roles = (ANSWER_ROLE, BRIDGE_ROLE) if run.bridges else (ANSWER_ROLE,)
    train_seed = run.seed if run.train_seed is None else run.train_seed
    scorer = ChoiceScorer.load(model_dir(), seed=train_seed)
    bridge_top1: list[int] = []  # held-out bridge top-1, base then after every pass
    top1_f1: list[float] = []  # held-out summed F1 of the pick, base then after every pass

    def measure() -> int | None:
        if bridges_held:
            bridge_top1.append(top1_hits(scorer, bridges_held))
            say(f"  bridge top-1 {bridge_top1[-1]}/{len(bridges_held)}")
        if not held_out:
            return None
        top1_f1.append(round(sum(top1_rewards(scorer, held_out)), 2))
        return top1_hits(scorer, held_out)

    def top1(hits: int | None) -> str:
        return (f"top-1 {hits}/{len(held_out)} (F1 {top1_f1[-1]:.1f})" if held_out
                else "top-1 not measured (--held-out 0)")

    base = measure()
    say(f"base: {top1(base)}")

    def progress(seen: int, total: int, loss: float) -> None:
        if seen % 40 < run.batch:
            say(f"  {seen}/{total} questions, loss {loss:.3f}, {time.perf_counter() - start:.0f} s")

    per_epoch: dict[int, int | None] = {}

    def epoch_end(epoch: int) -> None:
        per_epoch[epoch] = measure()
        say(f"epoch {epoch}: {top1(per_epoch[epoch])} ({time.perf_counter() - start:.0f} s)")
        if epoch < run.epochs:
            save_choice_adapter(scorer.policy, run.out / f"epoch-{epoch}" / "adapter",
                                {"trainer": "answer-choice", "epoch": epoch, "top1_held_out": per_epoch[epoch]},
                                roles)

    how = ChoiceTraining(lr=run.lr, batch=run.batch, epochs=run.epochs, seed=train_seed)
    stats = train_choice(scorer, train + bridges_train, how, progress=progress, epoch_end=epoch_end)
    trained = per_epoch[run.epochs]
    say(f"trained: {top1(trained)} ({stats.steps} steps, {stats.seconds:.0f} s)")
    summary = {"command": command, "settings": run.settings(),
               "held_out": len(held_out), "top1_base": base, "top1_trained": trained, "top1_per_epoch": per_epoch,
               "top1_f1_per_measure": top1_f1,
               "train_questions": len(train), "learnable": stats.examples, "steps": stats.steps,
               "final_loss": stats.loss, "train_seconds": stats.seconds}
    if run.bridges:
        summary |= {"bridge_held_out": len(bridges_held), "bridge_top1_features": sum(
            ex.correct[0] for ex in bridges_held), "bridge_top1_per_measure": bridge_top1,
            "bridge_train_learnable": sum(ex.learnable for ex in bridges_train)}
    save_choice_adapter(scorer.policy, run.out / "adapter", {"trainer": "answer-choice", **summary}, roles)
    (run.out / "summary.json").write_text(json.dumps(summary, indent=2))
    say(f"wrote {run.out / 'adapter'} and {run.out / 'summary.json'}")
    return summary


def measure_adapters(adapters: list[Path], spec: ChoiceQuestions, bridges: bool, model_dir: ModelDir,
                     say: Say) -> None:
    """Each adapter on the base model: the held-out answer top-1 and the pick's summed F1 (of `spec.held_out`
    questions, `spec.seed`'s order) and, with `bridges`, the held-out bridge top-1, as train_choice_adapter
    measures them after its pass."""
    data = answer_sets(spec, credit="f1")[: spec.held_out]
    bridge_held = bridge_sets(spec, {ex.question for ex in data})[0] if bridges else []
    base = model_dir()
    for path in adapters:
        scorer = ChoiceScorer.load(base, adapter=path, seed=spec.seed)
        answer = top1_hits(scorer, data)  # top1_hits scores without gradients
        answer_f1 = sum(top1_rewards(scorer, data))  # the pick's token F1 against the gold, summed
        line = f"{path}: answer top-1 {answer}/{len(data)} (F1 {answer_f1:.1f})"
        say(line + (f", bridge top-1 {top1_hits(scorer, bridge_held)}/{len(bridge_held)}" if bridge_held else ""))
