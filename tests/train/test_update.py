"""The update loop on a real (tiny, random) Llama with a real peft adapter: masks, padding, KL at init,
accumulation, checkpoint/resume and a real 2-process gloo update equal to the 1-process one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from deepresearch.train.config import TrainSettings
from deepresearch.train.update.batching import collate
from deepresearch.train.update.export import read_samples, write_samples
from deepresearch.train.update.grpo import completion_logps, grpo_loss, loss_normaliser
from deepresearch.train.update.updater import GRPOUpdater

from .tiny_model import random_samples, save_tiny_llama

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return save_tiny_llama(tmp_path_factory.mktemp("tiny") / "model")


def settings(**grpo) -> TrainSettings:
    s = TrainSettings()
    s.lora.r = 4
    s.lora.lora_alpha = 8
    s.grpo = s.grpo.model_copy(update={"learning_rate": 5e-3, **grpo})
    return s


def lora_weights(updater: GRPOUpdater) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in updater.adapter_state_dict().items()}


def assert_same_weights(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor], atol: float = 1e-6) -> None:
    assert a.keys() == b.keys() and a
    worst = max(float((a[k] - b[k]).abs().max()) for k in a)
    assert worst <= atol, f"adapters differ by {worst}"


def test_only_completion_positions_receive_gradient(tiny):
    updater = GRPOUpdater(tiny, settings())
    samples = random_samples(n_groups=1, group_size=3, calls_per_run=1)
    batch = collate(samples, pad_id=updater.pad_id)
    captured = {}

    def keep_grad(_module, _inputs, output):
        output.last_hidden_state.retain_grad()
        captured["h"] = output.last_hidden_state

    handle = updater.policy.get_decoder().register_forward_hook(keep_grad)
    logps = updater._logps(batch)
    handle.remove()
    cfg = updater.cfg
    parts = grpo_loss(logps, logps.detach(), batch, cfg, loss_normaliser(cfg, batch.n_tokens, batch.n_seqs))
    parts.loss.backward()
    grad = captured["h"].grad.abs().sum(-1)  # [B, T]
    predicts = torch.zeros_like(grad, dtype=torch.bool)
    predicts[batch.token_rows, batch.token_pred_pos] = True
    assert (grad[~predicts] == 0).all()  # prompt and padding positions: exactly zero
    assert (grad[predicts] > 0).all()


def test_padding_does_not_change_logprobs(tiny):
    updater = GRPOUpdater(tiny, settings())
    samples = random_samples(n_groups=1, group_size=3, calls_per_run=1, seed=3)
    with torch.no_grad():
        together = updater._logps(collate(samples, updater.pad_id))
        alone = torch.cat([updater._logps(collate([s], updater.pad_id)) for s in samples])
    assert torch.allclose(together, alone, atol=1e-5)


def test_temperature_divides_the_logits(tiny):
    updater = GRPOUpdater(tiny, settings())
    batch = collate(random_samples(n_groups=1, group_size=2, calls_per_run=1), updater.pad_id)
    with torch.no_grad():
        cold = completion_logps(updater.policy, batch, temperature=0.5)
        hot = completion_logps(updater.policy, batch, temperature=1.0)
    assert not torch.allclose(cold, hot)


def test_kl_to_the_base_is_zero_at_init_and_positive_after_a_step(tiny):
    updater = GRPOUpdater(tiny, settings(beta=0.1))
    samples = random_samples(seed=1)
    batch = collate(samples[:4], updater.pad_id)
    with torch.no_grad():
        assert torch.equal(updater._ref_logps(batch), updater._logps(batch))  # LoRA B = 0 at init
    stats = updater.train_round(samples)
    assert stats.kl_mean == 0.0
    with torch.no_grad():
        kl_gap = (updater._ref_logps(batch) - updater._logps(batch)).abs().max()
    assert kl_gap > 0
    assert updater.train_round(samples).kl_mean > 0


def test_accumulated_micro_batches_equal_one_batch(tiny):
    samples = random_samples(n_groups=4, seed=2)
    one = GRPOUpdater(tiny, settings(per_device_train_batch_size=64))
    many = GRPOUpdater(tiny, settings(per_device_train_batch_size=1))
    s_one, s_many = one.train_round(samples), many.train_round(samples)
    assert s_one.optimizer_steps == s_many.optimizer_steps == 1
    assert_same_weights(lora_weights(one), lora_weights(many))


def test_several_steps_per_round_use_the_pre_update_policy_as_old(tiny):
    samples = random_samples(n_groups=4, seed=4)
    updater = GRPOUpdater(tiny, settings(per_device_train_batch_size=2, gradient_accumulation_steps=2))
    stats = updater.train_round(samples)
    assert stats.optimizer_steps == 4  # 16 samples / (2 × 2)
    assert stats.ratio_mean != 1.0  # later steps see π_θ ≠ π_old


def test_resume_from_checkpoint_continues_exactly(tiny, tmp_path):
    cfg = settings(per_device_train_batch_size=4, gradient_accumulation_steps=1)
    r1, r2 = random_samples(seed=5), random_samples(seed=6)
    straight = GRPOUpdater(tiny, cfg)
    straight.train_round(r1)
    straight.train_round(r2)

    first = GRPOUpdater(tiny, cfg)
    first.train_round(r1)
    first.save_state(tmp_path / "ckpt")
    resumed = GRPOUpdater(tiny, cfg, resume_from=tmp_path / "ckpt")
    assert resumed.global_step == first.global_step
    resumed.train_round(r2)
    assert_same_weights(lora_weights(straight), lora_weights(resumed))


def test_saved_adapter_loads_with_peft_and_carries_metadata(tiny, tmp_path):
    import json

    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    updater = GRPOUpdater(tiny, settings())
    updater.train_round(random_samples())
    updater.save_adapter(tmp_path / "a", {"round": 1, "reward_mean": 0.25})
    meta = json.loads((tmp_path / "a" / "metadata.json").read_text())
    assert meta["step"] == 1 and meta["round"] == 1 and meta["reward_mean"] == 0.25
    loaded = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny), tmp_path / "a")
    batch = collate(random_samples()[:3], updater.pad_id)
    with torch.no_grad():
        assert torch.allclose(completion_logps(loaded, batch), updater._logps(batch), atol=1e-6)


def test_samples_round_trip_through_parquet(tmp_path):
    samples = random_samples()
    samples[0] = samples[0].model_copy(update={"weight": 0.5, "truncated": True})
    write_samples(samples, tmp_path / "s.parquet")
    assert read_samples(tmp_path / "s.parquet") == samples


def test_two_process_update_equals_one_process(tiny, tmp_path):
    """A real `accelerate launch` with 2 processes over gloo vs the same update in 1 process."""
    from deepresearch.train.update.launch import Launcher, launch_update

    # the same global batch per optimiser step: 2 per device × 2 accumulation × 2 processes = 2 × 4 × 1
    samples = random_samples(n_groups=3, seed=7)
    two_cfg = settings(per_device_train_batch_size=2, gradient_accumulation_steps=2)
    two = launch_update(tiny, samples, tmp_path / "two", two_cfg, Launcher("ddp", num_processes=2, timeout_s=300))
    single = GRPOUpdater(tiny, settings(per_device_train_batch_size=2, gradient_accumulation_steps=4))
    one = single.train_round(samples)
    assert two.optimizer_steps == one.optimizer_steps == 2  # 12 samples, 8 per step
    assert two.processed_tokens == one.processed_tokens
    # Adam hides a wrong gradient scale in the weights; the synced gradient's norm and the loss do not.
    assert two.grad_norm == pytest.approx(one.grad_norm, rel=1e-5)
    assert two.loss == pytest.approx(one.loss, rel=1e-5, abs=1e-7)
    from safetensors.torch import load_file

    saved = load_file(tmp_path / "two" / "adapter_model.safetensors")
    mine = {k.replace(".default", ""): v for k, v in lora_weights(single).items()}
    assert_same_weights(mine, saved, atol=2e-6)


def test_grammar_forced_tokens_carry_no_loss(tiny):
    """A token the sampler had no choice over (logged logprob 0) is left out of the loss and the count."""
    from deepresearch.train.update.batching import plan_step

    updater = GRPOUpdater(tiny, settings())
    sample = random_samples(n_groups=1, group_size=1, calls_per_run=1, seed=8)[0]
    n = len(sample.completion_ids)
    forced = sample.model_copy(update={"sampling_logprobs": [0.0] + sample.sampling_logprobs[1:]})
    batch = collate([forced], updater.pad_id, skip_forced=True)
    assert batch.n_tokens == n - 1
    assert batch.token_pred_pos[0] == len(sample.prompt_ids)  # token 0 (predicted at prompt_len − 1) skipped
    assert plan_step([forced], updater.cfg, 0, 1).n_tokens == n - 1
    assert collate([forced], updater.pad_id, skip_forced=False).n_tokens == n


def test_updates_raise_good_completions_and_lower_bad_ones(tiny):
    """The sign of the whole pipeline: after a few GRPO steps the positive-advantage completion is more
    likely and the negative one less likely than before."""
    good, bad = random_samples(n_groups=1, group_size=2, calls_per_run=1, seed=11)
    good = good.model_copy(update={"advantage": 1.0})
    bad = bad.model_copy(update={"advantage": -1.0})
    updater = GRPOUpdater(tiny, settings(learning_rate=2e-2, vllm_importance_sampling_correction=False))

    def seq_logp(sample) -> float:
        with torch.no_grad():
            return float(updater._logps(collate([sample], updater.pad_id)).sum())

    before = seq_logp(good), seq_logp(bad)
    for _ in range(5):
        updater.train_round([good, bad])
    after = seq_logp(good), seq_logp(bad)
    assert after[0] > before[0] + 0.1
    assert after[1] < before[1] - 0.1


def test_gradient_checkpointing_gives_the_same_update(tiny):
    samples = random_samples(seed=12)
    plain = GRPOUpdater(tiny, settings())
    recomputed = GRPOUpdater(tiny, settings(gradient_checkpointing=True))
    a, b = plain.train_round(samples), recomputed.train_round(samples)
    assert a.grad_norm == pytest.approx(b.grad_norm, rel=1e-5)
    assert_same_weights(lora_weights(plain), lora_weights(recomputed))
