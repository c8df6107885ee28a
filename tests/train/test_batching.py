"""Planning a round: optimiser steps, shards over processes, micro-batches within token limits."""

from __future__ import annotations

from deepresearch.train.config import GRPOSettings
from deepresearch.train.update.batching import collate, micro_batches, optimiser_steps, plan_step, shard, trainable

from .tiny_model import random_samples


def test_whole_round_is_one_step_by_default_and_steps_cover_every_sample_once():
    samples = random_samples(n_groups=5)
    assert len(optimiser_steps(samples, GRPOSettings(), world_size=1)) == 1
    steps = optimiser_steps(samples, GRPOSettings(per_device_train_batch_size=2, gradient_accumulation_steps=3), 2)
    assert [len(s) for s in steps] == [12, 8]
    assert sorted(s.sample_id for step in steps for s in step) == sorted(s.sample_id for s in samples)


def test_shards_balance_tokens_and_cover_everything():
    samples = random_samples(n_groups=6)
    parts = shard(samples, 3)
    loads = [sum(s.n_tokens for s in p) for p in parts]
    assert max(loads) - min(loads) <= max(s.n_tokens for s in samples)
    assert sorted(s.sample_id for p in parts for s in p) == sorted(s.sample_id for s in samples)


def test_micro_batches_respect_sequence_and_padded_token_limits():
    samples = random_samples(n_groups=6)
    for mb in micro_batches(samples, max_seqs=3, max_tokens=120):
        assert len(mb) <= 3
        assert len(mb) == 1 or max(s.n_tokens for s in mb) * len(mb) <= 120


def test_every_process_runs_the_same_number_of_micro_batches():
    samples = random_samples(n_groups=1, group_size=3, calls_per_run=1)  # 3 samples over 2 processes
    cfg = GRPOSettings(per_device_train_batch_size=1)
    plans = [plan_step(samples, cfg, rank, 2) for rank in range(2)]
    assert len(plans[0].micro_batches) == len(plans[1].micro_batches) == 2
    padding = [s for p in plans for mb in p.micro_batches for s in mb if s.weight == 0.0]
    assert len(padding) == 1 and padding[0].sample_id.endswith(":pad")
    assert plans[0].n_seqs == plans[1].n_seqs == 3  # padding is not counted


def test_trainable_drops_zero_weight_and_optionally_truncated():
    samples = random_samples(n_groups=1, group_size=2, calls_per_run=1)
    samples[0] = samples[0].model_copy(update={"truncated": True})
    samples[1] = samples[1].model_copy(update={"weight": 0.0})
    assert trainable(samples, GRPOSettings()) == [samples[0]]
    assert trainable(samples, GRPOSettings(mask_truncated_completions=True)) == []


def test_collate_lays_out_completion_tokens_after_their_prompts():
    a, b = random_samples(n_groups=1, group_size=2, calls_per_run=1, seed=9)
    batch = collate([a, b], pad_id=0)
    assert batch.input_ids.shape == (2, max(a.n_tokens, b.n_tokens))
    for row, s in enumerate((a, b)):
        pos = batch.token_pred_pos[batch.token_rows == row]
        assert pos.tolist() == list(range(len(s.prompt_ids) - 1, s.n_tokens - 1))
        assert batch.input_ids[row, pos + 1].tolist() == s.completion_ids
    assert int(batch.attention_mask.sum()) == a.n_tokens + b.n_tokens


def test_micro_batch_count_matches_what_a_round_runs():
    from deepresearch.train.update.batching import count_micro_batches

    samples = random_samples(n_groups=3)
    cfg = GRPOSettings(per_device_train_batch_size=2, gradient_accumulation_steps=2, num_iterations=2)
    steps = optimiser_steps(samples, cfg, 1)
    assert count_micro_batches(samples, cfg) == 2 * sum(len(plan_step(s, cfg, 0, 1).micro_batches) for s in steps)
    assert count_micro_batches(samples, GRPOSettings()) == len(samples)  # micro-batch 1 by default
