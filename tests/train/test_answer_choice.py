"""Answer-choice training: the objective by hand, the examples, and on the real 135M model that the
trained score is exactly what the graph's re-ranker computes and that training moves its pick."""

from __future__ import annotations

import asyncio
import json
import math

import pytest
import torch
from deepresearch.agent.reader import ANSWER_ROLE, LIKELIHOOD_WEIGHT, TEMPLATE, Candidate
from deepresearch.train.choice.answer_choice import (
    ChoiceExample,
    ChoiceScorer,
    ChoiceTraining,
    choice_loss,
    save_choice_adapter,
    top1_hits,
    train_choice,
)


def test_loss_is_minus_log_of_the_correct_mass_and_its_gradient_raises_it():
    scores = torch.tensor([1.0, 2.0, 0.5], requires_grad=True)
    loss = choice_loss(scores, [False, False, True])
    p = torch.softmax(scores.detach(), 0)
    assert loss.item() == pytest.approx(-math.log(float(p[2])))
    loss.backward()
    # ∂(−J)/∂s = p − p(·|R=1): the correct one is pushed up by 1 − p, each other down by its p
    assert scores.grad.tolist() == pytest.approx([float(p[0]), float(p[1]), float(p[2]) - 1.0])


def test_two_correct_candidates_share_the_credit_by_their_probability():
    scores = torch.tensor([0.0, math.log(3.0), 5.0], requires_grad=True)
    choice_loss(scores, [True, True, False]).backward()
    p = torch.softmax(scores.detach(), 0)
    within = p[:2] / p[:2].sum()  # p(c | R=1): 1/4 and 3/4
    assert scores.grad[:2].tolist() == pytest.approx((p[:2] - within).tolist())
    assert within.tolist() == pytest.approx([0.25, 0.75])


def test_example_marks_the_gold_and_its_aliases_after_normalising():
    cands = [Candidate("The Beatles", 1.0, "s1", 0), Candidate("1969", 0.5, "s2", 0),
             Candidate("Abbey Road", 0.2, "s3", 1)]
    ex = ChoiceExample.of("q?", cands, ["Beatles", "the fab four"])
    assert ex.correct == (True, False, False) and ex.learnable
    assert ex.candidates[1] == ("1969", "s2", 0.5)
    assert not ChoiceExample.of("q?", cands, ["Rolling Stones"]).learnable  # no correct candidate: no signal
    assert not ChoiceExample.of("q?", cands[:1], ["Beatles"]).learnable  # one candidate: no choice


def test_graded_credit_makes_the_loss_minus_log_expected_f1():
    scores = torch.tensor([1.0, 2.0, 0.5], requires_grad=True)
    rewards = [0.0, 0.5, 1.0]
    loss = choice_loss(scores, rewards)
    p = torch.softmax(scores.detach(), 0)
    expected = float(p[1]) * 0.5 + float(p[2])
    assert loss.item() == pytest.approx(-math.log(expected))
    loss.backward()
    # ∂(−J)/∂s_c = p(c) − p(c) R(c) / E[R]: a partial answer is pushed up, by less than the gold
    want = [float(p[c]) - float(p[c]) * rewards[c] / expected for c in range(3)]
    assert scores.grad.tolist() == pytest.approx(want)
    assert scores.grad[2] < scores.grad[1] < 0 < scores.grad[0]


def test_f1_credit_grades_partial_spans_and_makes_their_set_learnable():
    cands = [Candidate("Lee County", 1.0, "s1", 0), Candidate("Mississippi", 0.5, "s1", 0),
             Candidate("Tupelo", 0.2, "s2", 1)]
    graded = ChoiceExample.of("q?", cands, ["Lee County, Mississippi"], credit="f1")
    assert graded.correct == (False, False, False)  # EM: no candidate is the gold
    assert graded.rewards == pytest.approx((0.8, 0.5, 0.0)) and graded.learnable
    assert not ChoiceExample.of("q?", cands, ["Lee County, Mississippi"]).learnable  # exact credit: no signal
    exact = ChoiceExample.of("q?", cands, ["Tupelo"])
    assert exact.credit is None and exact.rewards == (0.0, 0.0, 1.0)
    assert ChoiceExample.of("q?", cands, ["tupelo"], credit="f1").rewards == (0.0, 0.0, 1.0)


def test_training_with_nothing_learnable_is_a_clear_error():
    ex = ChoiceExample("q?", (("a", "s", 0.0), ("b", "s", 0.0)), (False, False))
    with pytest.raises(ValueError, match="nothing to learn"):
        train_choice(ChoiceScorer(torch.nn.Linear(1, 1), tokenizer=None), [ex])


# --- the real 135M model ------------------------------------------------------------------------
# A made-up fact, so neither model knows it before: only the evidence sentence and training can decide.
QUESTION = "Which company manufactured the Zorvex 300 tractor?"
SENTENCE = "The Zorvex 300 was a tractor made by Kellner Brothers, a firm founded by Otto Brandt in Ohio."
# Features that prefer the founder by more than the base model's likelihood prefers the firm (~2.5 nats).
EXAMPLE = ChoiceExample(QUESTION, (("Otto Brandt", SENTENCE, 3.0), ("Ohio", SENTENCE, 0.3),
                                   ("Kellner Brothers", SENTENCE, 0.0)), (False, False, True))


@pytest.fixture(scope="module")
def scorer():
    from deepresearch.agent.model.embedded.loaders.packaged_model import embedded_model_dir

    from ..model.conftest import model_cache_dir

    model_dir = embedded_model_dir(model_cache_dir())
    return ChoiceScorer.load(model_dir, seed=0), model_dir


# Two sentences of different lengths, interleaved: candidates are packed into one row per sentence
# (the second row padded), each continuation seeing its prompt and itself only.
OTHER = "Otto Brandt later sold Kellner Brothers to a Dutch bank in 1931."
MIXED = ChoiceExample(QUESTION, (("Otto Brandt", SENTENCE, 3.0), ("a Dutch bank", OTHER, 1.0),
                                 ("Kellner Brothers", SENTENCE, 0.0), ("1931", OTHER, 0.5),
                                 ("Ohio", SENTENCE, 0.3)), (False, False, True, False, False))


@pytest.mark.parametrize("example", [EXAMPLE, MIXED], ids=["one-sentence", "two-sentences"])
def test_the_trained_score_is_what_the_graph_reranks_by(scorer, example):
    """A fresh adapter is the base model: s(c) equals features + the engine's `score` mean logprob,
    each candidate scored in its own row there."""
    from deepresearch.agent.model.embedded.chat_model import EmbeddedChatModel
    from deepresearch.agent.model.embedded.config import EngineConfig

    choice, model_dir = scorer

    async def engine_scores() -> list[list[float]]:
        model = EmbeddedChatModel.load(model_dir, EngineConfig(max_batch=2))
        try:
            return [(await model.score(TEMPLATE.format(sentence=sentence, question=QUESTION), [" " + text]))[0]
                    for text, sentence, _ in example.candidates]
        finally:
            await model.close()

    expected = [f + LIKELIHOOD_WEIGHT * sum(lps) / len(lps)
                for (_, _, f), lps in zip(example.candidates, asyncio.run(engine_scores()), strict=True)]
    with torch.no_grad():
        assert choice.scores(example).tolist() == pytest.approx(expected, abs=1e-4)


def test_training_moves_the_pick_to_the_correct_candidate_and_saves_a_scoped_adapter(scorer, tmp_path):
    choice, _ = scorer
    assert top1_hits(choice, [EXAMPLE]) == 0  # the features prefer "Otto Brandt"
    ends: list[tuple[int, bool]] = []  # (pass, policy in train mode) at every epoch_end
    stats = train_choice(choice, [EXAMPLE], ChoiceTraining(lr=2e-3, batch=1, epochs=6),
                         epoch_end=lambda n: ends.append((n, choice.policy.training)))
    assert stats.steps == 6 and stats.examples == 1
    assert ends == [(n, False) for n in range(1, 7)]  # measured after each pass, in eval mode
    assert top1_hits(choice, [EXAMPLE]) == 1
    save_choice_adapter(choice.policy, tmp_path / "adapter", {"trainer": "answer-choice"})
    meta = json.loads((tmp_path / "adapter" / "metadata.json").read_text())
    assert meta["roles"] == [ANSWER_ROLE] and (tmp_path / "adapter" / "adapter_config.json").is_file()
