"""The policy being trained: the frozen base model with a trainable LoRA adapter on top.

One loader for both losses: the GRPO update (update/updater.py) and the choice losses (choice/answer_choice.py)
start from the same weights the same way.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import torch

from .config import LoraSettings


def load_policy(
    model_path: Path, lora: LoraSettings, init_adapter: Path | None, seed: int, dtype: torch.dtype = torch.float32,
) -> torch.nn.Module:
    """The frozen base model in `dtype` (fp32 on CPUs, bf16 on GPUs: see update/device.py) + a trainable LoRA adapter
    (a fresh one, or a published one to continue); peft keeps the adapter's weights in fp32 either way."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)  # the fresh adapter's init is identical on every process and every run
    base = AutoModelForCausalLM.from_pretrained(str(model_path), dtype=dtype)
    base.config.use_cache = False
    with warnings.catch_warnings():  # peft reads a property transformers deprecated: noise in every train run
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        if init_adapter is not None:
            return PeftModel.from_pretrained(base, str(init_adapter), is_trainable=True)
        config = LoraConfig(
            r=lora.r, lora_alpha=lora.lora_alpha, lora_dropout=lora.lora_dropout,
            target_modules=list(lora.target_modules), task_type="CAUSAL_LM",
        )
        return get_peft_model(base, config)
