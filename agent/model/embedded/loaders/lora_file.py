"""A plain LoRA adapter read straight from its peft files into the lean forward's products, without peft.

Wrapping the model in peft costs ~3 s here (transformers' model is built on the lean weights first), more
than a whole answer's scoring. The lean forward only needs, per decoder layer and projection, A [r, in] and
s · B [out, r] (s = alpha / r, or alpha / √r with rsLoRA), which the adapter's safetensors hold as
`…layers.N.{self_attn,mlp}.PROJ.lora_{A,B}.weight`. Anything else (DoRA and other variants, a LoRA bias,
per-module ranks, extra trained modules, other target layers) returns None: peft loads those.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import torch

from ...lora_targets import LORA_TARGET_MODULES

LayerLora = dict[str, tuple[torch.Tensor, torch.Tensor]]  # projection → (A [r, in], scaling · B [out, r])

_KEY = re.compile(r"(?:^|\.)layers\.(\d+)\.(?:self_attn|mlp)\.(\w+)\.lora_([AB])\.weight$")
# Config keys that do not change what a loaded adapter computes (initialisation, bookkeeping, which
# modules: the weight keys say that); any other key set to something truthy means "not plain".
_NEUTRAL = {
    "peft_type", "task_type", "r", "lora_alpha", "use_rslora", "target_modules", "lora_dropout", "bias",
    "base_model_name_or_path", "revision", "inference_mode", "peft_version", "auto_mapping", "init_lora_weights",
    "loftq_config", "eva_config", "corda_config", "lora_ga_config", "layers_to_transform", "layers_pattern",
    "exclude_modules", "ensure_weight_tying", "megatron_config", "megatron_core", "qalora_group_size",
    "fan_in_fan_out",
}


def plain_lora_scaling(config: dict[str, Any]) -> float | None:
    """s of a plain LoRA config (None if the adapter is anything else)."""
    if config.get("peft_type") != "LORA" or config.get("bias", "none") != "none" or config.get("fan_in_fan_out"):
        return None
    if any(value for key, value in config.items() if key not in _NEUTRAL):
        return None
    r, alpha = int(config["r"]), float(config["lora_alpha"])
    return alpha / math.sqrt(r) if config.get("use_rslora") else alpha / r


def read_plain_lora(path: Path, layers: torch.nn.ModuleList) -> list[LayerLora] | None:
    """The adapter at `path` as (A, s·B) per layer and projection of the decoder `layers` (LlamaWeights'), or
    None when it is not plain LoRA on those projections with their shapes (or its files do not read as one)."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    path = Path(path)
    weights_file = path / "adapter_model.safetensors"
    try:
        scaling = plain_lora_scaling(json.loads((path / "adapter_config.json").read_text()))
        if scaling is None or not weights_file.is_file():
            return None
        tensors = load_file(str(weights_file))
    except (OSError, ValueError, KeyError, TypeError, SafetensorError):
        return None
    parts: dict[tuple[int, str], dict[str, torch.Tensor]] = {}
    for key, tensor in tensors.items():
        match = _KEY.search(key)
        if match is None or match.group(2) not in LORA_TARGET_MODULES or int(match.group(1)) >= len(layers):
            return None
        parts.setdefault((int(match.group(1)), match.group(2)), {})[match.group(3)] = tensor
    products: list[LayerLora] = [{} for _ in layers]
    for (index, projection), pair in parts.items():
        block = layers[index].self_attn if projection.endswith(("q_proj", "k_proj", "v_proj", "o_proj")) \
            else layers[index].mlp
        out_features, in_features = getattr(block, projection).weight.shape
        if set(pair) != {"A", "B"} or pair["A"].dim() != 2 or pair["B"].dim() != 2:
            return None
        rank = pair["A"].shape[0]
        if tuple(pair["A"].shape) != (rank, in_features) or tuple(pair["B"].shape) != (out_features, rank):
            return None
        # fp32 like the weights (an adapter may be stored in bf16), contiguous for the products.
        a = pair["A"].to(torch.float32).contiguous()
        products[index][projection] = (a, (pair["B"].to(torch.float32) * scaling).contiguous())
    return products if parts else None
