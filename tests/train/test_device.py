"""Device and precision of the update: CPU as measured here, and a (mocked) CUDA GPU as on the GPU box."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from deepresearch.train.config import GRPOSettings, TrainSettings
from deepresearch.train.update.batching import optimiser_steps, plan_step
from deepresearch.train.update.device import GPU_MICRO_BATCH, DevicePlan, device_plan, micro_batch_size
from deepresearch.train.update.updater import GRPOUpdater

from .tiny_model import random_samples, save_tiny_llama

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@pytest.fixture
def gpu(monkeypatch: pytest.MonkeyPatch):
    """torch reports one CUDA device that supports bf16 (an A100 / H100)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    monkeypatch.delenv("ACCELERATE_MIXED_PRECISION", raising=False)


def test_cpu_trains_in_fp32_one_sequence_at_a_time_without_recomputation(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    plan = device_plan(GRPOSettings())
    assert plan == DevicePlan("cpu", torch.float32, "no", gradient_checkpointing=False, per_device_train_batch_size=1)


def test_a_gpu_gets_bf16_weights_autocast_checkpointing_and_bigger_micro_batches(gpu):
    plan = device_plan(GRPOSettings())
    assert plan.cuda and plan.dtype == torch.bfloat16 and plan.mixed_precision == "bf16"
    assert plan.gradient_checkpointing and plan.per_device_train_batch_size == GPU_MICRO_BATCH
    resolved = plan.apply(GRPOSettings())
    assert resolved.gradient_checkpointing is True and resolved.per_device_train_batch_size == GPU_MICRO_BATCH


def test_explicit_settings_and_the_launchers_precision_win_on_a_gpu(gpu, monkeypatch):
    plan = device_plan(GRPOSettings(gradient_checkpointing=False, per_device_train_batch_size=2))
    assert not plan.gradient_checkpointing and plan.per_device_train_batch_size == 2
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "fp16")
    assert device_plan(GRPOSettings()).mixed_precision == "fp16"


def test_sharded_launches_and_cards_without_bf16_keep_fp32_weights(gpu, monkeypatch):
    assert device_plan(GRPOSettings(), sharded=True).dtype == torch.float32  # FSDP flat params: one dtype
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)  # e.g. a V100
    plan = device_plan(GRPOSettings())
    assert plan.dtype == torch.float32 and plan.mixed_precision == "no" and plan.gradient_checkpointing


def test_micro_batches_follow_the_device(gpu):
    samples = random_samples(n_groups=4, group_size=5, calls_per_run=1)  # 20 short sequences
    cfg = GRPOSettings()
    assert micro_batch_size(cfg) == GPU_MICRO_BATCH
    (step,) = optimiser_steps(samples, cfg, 1)
    assert [len(mb) for mb in plan_step(step, cfg, 0, 1).micro_batches] == [8, 8, 4]


def test_updater_loads_the_base_in_the_plans_dtype_and_keeps_lora_in_fp32(tmp_path: Path):
    """What the GPU plan does to the model, run on the CPU: bf16 frozen base, fp32 trainable LoRA,
    checkpointing on, micro-batches of the plan's size, and an update that changes the adapter."""
    tiny = save_tiny_llama(tmp_path / "model")
    settings = TrainSettings()
    settings.grpo = settings.grpo.model_copy(update={"learning_rate": 5e-3})
    plan = DevicePlan("cpu", torch.bfloat16, "no", gradient_checkpointing=True, per_device_train_batch_size=4)
    updater = GRPOUpdater(tiny, settings, plan=plan)
    frozen = {p.dtype for p in updater.policy.parameters() if not p.requires_grad}
    trained = {p.dtype for p in updater.policy.parameters() if p.requires_grad}
    assert frozen == {torch.bfloat16} and trained == {torch.float32}
    assert any(getattr(m, "gradient_checkpointing", False) for m in updater.policy.modules())  # layers recompute
    assert updater.cfg.per_device_train_batch_size == 4 and updater.cfg.gradient_checkpointing is True
    before = {k: v.clone() for k, v in updater.adapter_state_dict().items()}
    stats = updater.train_round(random_samples(seed=3))
    after = updater.adapter_state_dict()
    assert stats.optimizer_steps == 1 and torch.isfinite(torch.tensor(stats.loss))
    assert any(not torch.equal(before[k], after[k]) for k in before)
