"""The answer choice inside the closed loop: the re-ranker's candidate sets that rollouts log become the
choice loss's examples, and the round's update steps on them (its own optimiser, saved for resume)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import torch
from deepresearch.agent.trace.store import TraceStore
from deepresearch.train.choice.answer_choice import (
    ChoiceExample,
    ChoiceScorer,
    logged_examples,
    read_choice_examples,
    top1_hits,
    write_choice_examples,
)
from deepresearch.train.rounds.loop import RoundReport
from deepresearch.train.update.updater import CHOICE_OPTIMIZER_STATE, GRPOUpdater, UpdateStats

from .test_answer_choice import EXAMPLE, MIXED
from .test_update import lora_weights as lora
from .test_update import settings
from .tiny_model import random_samples, save_tiny_chat_model

QUESTION = "Who designed the Zorvex?"


def logged(*texts: str, quote: str = "The Zorvex was designed by Ada Brandt in Ohio.") -> dict:
    """An `answer_scores` payload as the graph's re-ranker writes it."""
    return {"template": "answer-likelihood@x", "weight": 1.0, "candidates": [
        {"text": t, "features": 1.0 - i / 10, "likelihood": -2.0, "quote": quote} for i, t in enumerate(texts)]}


def test_logged_candidate_sets_become_examples_once_each(tmp_path: Path):
    store = TraceStore(tmp_path / "traces.db")
    runs = {name: store.start_run(QUESTION, {}) for name in ("a", "b", "other", "missed", "old", "no-gold")}
    store.log_event(runs["a"], "answer_scores", logged("Ohio", "Ada Brandt"))
    store.log_event(runs["b"], "answer_scores", logged("Ohio", "Ada Brandt"))  # the same set as run a
    store.log_event(runs["other"], "answer_scores", logged("Ada Brandt", "Zorvex"))
    store.log_event(runs["missed"], "answer_scores", logged("Ohio", "Zorvex"))  # the gold is not among them
    store.log_event(runs["old"], "answer_scores", logged("Ohio", "Ada Brandt", quote=""))  # no sentence logged
    store.log_event(runs["no-gold"], "answer_scores", logged("Ohio", "Ada Brandt"))
    golds = ["ada brandt"]
    examples = logged_examples(store, [(runs[n], QUESTION, golds) for n in ("a", "b", "other", "missed", "old")]
                               + [(runs["no-gold"], QUESTION, [])])
    assert [ex.candidates for ex in examples] == [
        (("Ohio", "The Zorvex was designed by Ada Brandt in Ohio.", 1.0),
         ("Ada Brandt", "The Zorvex was designed by Ada Brandt in Ohio.", 0.9)),
        (("Ada Brandt", "The Zorvex was designed by Ada Brandt in Ohio.", 1.0),
         ("Zorvex", "The Zorvex was designed by Ada Brandt in Ohio.", 0.9)),
    ]
    assert [ex.correct for ex in examples] == [(False, True), (True, False)]
    assert all(ex.question == QUESTION for ex in examples)


def test_examples_round_trip_through_the_launcher_file(tmp_path: Path):
    graded = replace(MIXED, credit=(0.0, 0.0, 1.0, 0.4, 0.0))
    write_choice_examples([EXAMPLE, MIXED, graded], tmp_path / "choice.json")
    assert read_choice_examples(tmp_path / "choice.json") == [EXAMPLE, MIXED, graded]


def test_the_round_line_says_what_the_choice_loss_did():
    update = UpdateStats(samples=0, choice_examples=3, choice_steps=1, choice_loss=0.75, seconds=4.2)
    line = RoundReport(round=2, rollout_runs=8, update=update, adapter="policy-0002").line()
    assert "answer choice: 3 candidate sets, loss 0.750, update 4 s" in line
    both = RoundReport(round=2, rollout_runs=8, update=update, choice_examples=2, bridge_examples=1).line()
    assert "answer choice: 2 candidate sets + 1 bridge sets, loss 0.750" in both
    assert "samples" not in line  # a choice-only round (--train-roles answer) has no token update to report
    both = update.model_copy(update={"samples": 5, "loss": 0.1})
    line = RoundReport(round=2, rollout_runs=8, samples=5, update=both).line()
    assert "5 samples, update 4 s" in line and line.endswith("answer choice: 3 candidate sets, loss 0.750")


# --- the update, on a tiny random model with the real tokenizer ---------------------------------
@pytest.fixture(scope="module")
def tiny_chat(tmp_path_factory) -> Path:
    from deepresearch.agent.model.embedded.loaders.packaged_model import embedded_model_dir

    from ..model.conftest import model_cache_dir

    return save_tiny_chat_model(tmp_path_factory.mktemp("tiny-chat"), embedded_model_dir(model_cache_dir()))


def largest_difference(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> float:
    assert a.keys() == b.keys() and a
    return max(float((a[k] - b[k]).abs().max()) for k in a)


def test_a_round_with_only_candidate_sets_steps_the_adapter(tiny_chat: Path):
    updater = GRPOUpdater(tiny_chat, settings())
    before = lora(updater)
    unlearnable = ChoiceExample("q?", (("a", "s", 0.0), ("b", "s", 0.0)), (False, False))
    stats = updater.train_round([], choice=[EXAMPLE, MIXED, unlearnable])
    assert (stats.choice_examples, stats.choice_steps, stats.optimizer_steps) == (2, 1, 0)
    assert stats.choice_loss > 0 and updater.rounds == 1
    assert largest_difference(before, lora(updater)) > 0


def test_the_loops_choice_steps_are_the_choice_trainers_pass(tiny_chat: Path):
    """One round's choice steps = one pass of train_choice (`deepresearch train choices`, whose adapter was
    measured in the graph) over the same examples in the same order: same optimiser, batch, clipping."""
    import random

    from deepresearch.train.choice.answer_choice import ChoiceTraining, train_choice
    from deepresearch.train.policy import load_policy
    from transformers import PreTrainedTokenizerFast

    cfg = settings()
    examples = [EXAMPLE, MIXED, EXAMPLE, MIXED, MIXED]
    policy = load_policy(tiny_chat, cfg.lora, None, seed=cfg.grpo.seed)
    scorer = ChoiceScorer(policy, PreTrainedTokenizerFast.from_pretrained(str(tiny_chat)), 2)
    train_choice(scorer, examples, ChoiceTraining(lr=cfg.grpo.answer_choice_lr, batch=4, epochs=1, seed=7))
    order = list(examples)
    random.Random(7).shuffle(order)  # train_choice's order
    updater = GRPOUpdater(tiny_chat, cfg)
    updater.train_round([], choice=order)
    script = {k.replace(".default", ""): v for k, v in policy.state_dict().items() if "lora_" in k}
    loop = {k.replace(".default", ""): v for k, v in lora(updater).items()}
    assert largest_difference(script, loop) <= 1e-6


def test_the_choice_loss_is_off_at_a_zero_step_size(tiny_chat: Path):
    updater = GRPOUpdater(tiny_chat, settings(answer_choice_lr=0.0))
    before = lora(updater)
    stats = updater.train_round([], choice=[EXAMPLE])
    assert stats.choice_examples == 0 and updater.rounds == 0  # nothing to learn: no round
    assert largest_difference(before, lora(updater)) == 0


def test_a_resumed_update_continues_the_choice_optimiser_exactly(tiny_chat: Path, tmp_path: Path):
    cfg = settings()
    r1, r2 = random_samples(seed=5), random_samples(seed=6)
    straight = GRPOUpdater(tiny_chat, cfg)
    straight.train_round(r1, choice=[EXAMPLE])
    straight.train_round(r2, choice=[MIXED])

    first = GRPOUpdater(tiny_chat, cfg)
    first.train_round(r1, choice=[EXAMPLE])
    first.save_state(tmp_path / "ckpt")
    assert (tmp_path / "ckpt" / CHOICE_OPTIMIZER_STATE).is_file()
    resumed = GRPOUpdater(tiny_chat, cfg, resume_from=tmp_path / "ckpt")
    resumed.train_round(r2, choice=[MIXED])
    assert largest_difference(lora(straight), lora(resumed)) <= 1e-6


# --- the real 135M model -------------------------------------------------------------------------
def test_the_loops_choice_steps_move_the_real_models_pick():
    """What `deepresearch train choices` showed, through the trainer's own update: the features prefer
    the founder, the loss moves the pick to the firm."""
    from deepresearch.agent.model.embedded.loaders.packaged_model import embedded_model_dir
    from transformers import PreTrainedTokenizerFast

    from ..model.conftest import model_cache_dir

    model_dir = embedded_model_dir(model_cache_dir())
    updater = GRPOUpdater(model_dir, settings(answer_choice_lr=2e-3))
    scorer = ChoiceScorer(updater.policy, PreTrainedTokenizerFast.from_pretrained(str(model_dir)), 0)
    assert top1_hits(scorer, [EXAMPLE]) == 0
    losses = [updater.train_round([], choice=[EXAMPLE]).choice_loss for _ in range(6)]
    assert losses[-1] < losses[0]
    assert top1_hits(scorer, [EXAMPLE]) == 1


def test_two_processes_step_the_choice_loss_as_one(tiny_chat: Path, tmp_path: Path):
    """`--launcher accelerate`: the sets reach the update processes (a JSON file), each steps on all of them and
    the averaged gradients keep the replicas equal to one process's update."""
    from deepresearch.train.update.launch import Launcher, launch_update
    from safetensors.torch import load_file

    cfg = settings()
    two = launch_update(tiny_chat, [], tmp_path / "two", cfg, Launcher("ddp", num_processes=2, timeout_s=300),
                        choice=[EXAMPLE, MIXED])
    single = GRPOUpdater(tiny_chat, cfg)
    one = single.train_round([], choice=[EXAMPLE, MIXED])
    assert (two.choice_examples, two.choice_steps) == (one.choice_examples, one.choice_steps) == (2, 1)
    assert two.choice_loss == pytest.approx(one.choice_loss, rel=1e-5)
    saved = load_file(tmp_path / "two" / "adapter_model.safetensors")
    mine = {k.replace(".default", ""): v for k, v in lora(single).items()}
    assert largest_difference(mine, saved) <= 2e-6
