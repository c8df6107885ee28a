"""Where and in what precision the update runs: one small decision, made once per trainer process.

CPU (this machine, tests, demos): fp32 everywhere, micro-batches of one sequence, no recomputation —
bf16 is several times slower on CPUs without AMX and memory is not the limit for a 135M model.
One CUDA GPU (next to vLLM): the frozen base weights in bf16 (half the memory of fp32; a 8B model is
16 GB), the LoRA weights and their optimiser states in fp32 (peft keeps adapters fp32), bf16 autocast,
gradient checkpointing on, several sequences per micro-batch. Sharded launches (FSDP / ZeRO) keep fp32
parameters: their flat parameters need one dtype and their mixed-precision config casts the compute.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch

from ..config import GRPOSettings

GPU_MICRO_BATCH = 8  # sequences per micro-batch on a GPU; max_tokens_per_microbatch still bounds memory
CPU_MICRO_BATCH = 1  # no padding, causal fast path


@dataclass(frozen=True)
class DevicePlan:
    device: str  # "cuda" | "cpu"
    dtype: torch.dtype  # of the frozen base weights
    mixed_precision: str  # accelerate's: "no" | "bf16" | "fp16"
    gradient_checkpointing: bool
    per_device_train_batch_size: int

    @property
    def cuda(self) -> bool:
        return self.device == "cuda"

    def apply(self, grpo: GRPOSettings) -> GRPOSettings:
        """The settings with their automatic values (None) made concrete for this device."""
        return grpo.model_copy(update={"gradient_checkpointing": self.gradient_checkpointing,
                                       "per_device_train_batch_size": self.per_device_train_batch_size})


def cuda_available() -> bool:
    return torch.cuda.is_available()


def device_plan(grpo: GRPOSettings, *, sharded: bool = False) -> DevicePlan:
    """CUDA when torch sees a GPU, else the CPU. Explicit settings win over the device's defaults; the
    ACCELERATE_MIXED_PRECISION environment variable (set by `accelerate launch`) wins on GPUs."""
    cuda = cuda_available()
    bf16 = cuda and torch.cuda.is_bf16_supported()
    if not cuda:
        dtype, precision = torch.float32, "no"
    else:
        # No bf16 (pre-Ampere cards): fp32 weights; fp16 without loss scaling is not safe for the update.
        dtype = torch.bfloat16 if bf16 and not sharded else torch.float32
        precision = os.environ.get("ACCELERATE_MIXED_PRECISION") or ("bf16" if bf16 else "no")
    checkpointing = grpo.gradient_checkpointing if grpo.gradient_checkpointing is not None else cuda
    batch = grpo.per_device_train_batch_size or default_micro_batch(cuda)
    return DevicePlan(device="cuda" if cuda else "cpu", dtype=dtype, mixed_precision=precision,
                      gradient_checkpointing=checkpointing, per_device_train_batch_size=batch)


def default_micro_batch(cuda: bool) -> int:
    return GPU_MICRO_BATCH if cuda else CPU_MICRO_BATCH


def micro_batch_size(grpo: GRPOSettings) -> int:
    """Sequences per micro-batch: the setting, or this device's default when it is left automatic."""
    return grpo.per_device_train_batch_size or default_micro_batch(cuda_available())
