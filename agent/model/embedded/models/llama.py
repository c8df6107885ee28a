"""The embedded model's weights as plain torch modules, read from the converted safetensors directory
without transformers' model classes.

Why: importing transformers' Llama classes pulls in torch._dynamo, torch.distributed and triton, ~3 s of
every `deepresearch ask` start-up on this CPU, and the lean forward (layers/forward.py) only reads
weights. The modules here carry transformers' names (`model.layers.3.self_attn.q_proj.weight`), so the
checkpoint loads as is and the lean forward reads this tree or a LlamaForCausalLM alike.

A LoRA adapter (peft) and `forward="transformers"` need transformers' model: `LlamaWeights.transformers()`
builds it once, on first need, and hands it this tree's parameters, so both hold the very same tensors and
an adapter merged into the weights is what the lean forward computes with.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
import torch.nn.functional as F
from torch import nn

from ...base import ModelError

if TYPE_CHECKING:
    from ..kernels.gguf_blocks import GGUFBlocks


@dataclass(frozen=True)
class LlamaConfig:
    """The fields of a Llama config.json the lean forward and the engine read (transformers' names)."""

    model_type: str
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    vocab_size: int
    max_position_embeddings: int
    rms_norm_eps: float
    rope_parameters: dict[str, Any]
    eos_token_id: int | list[int] | None
    tie_word_embeddings: bool
    attention_bias: bool = False
    mlp_bias: bool = False

    @classmethod
    def read(cls, model_dir: Path) -> LlamaConfig:
        path = Path(model_dir) / "config.json"
        try:
            raw = json.loads(path.read_text())
            rope = dict(raw.get("rope_parameters") or {"rope_type": "default"})
            rope.setdefault("rope_theta", float(raw.get("rope_theta", 10000.0)))  # transformers' Llama default
            heads = int(raw["num_attention_heads"])
            return cls(
                model_type=str(raw["model_type"]), hidden_size=int(raw["hidden_size"]),
                intermediate_size=int(raw["intermediate_size"]), num_hidden_layers=int(raw["num_hidden_layers"]),
                num_attention_heads=heads, num_key_value_heads=int(raw.get("num_key_value_heads", heads)),
                head_dim=int(raw.get("head_dim") or raw["hidden_size"] // heads), vocab_size=int(raw["vocab_size"]),
                max_position_embeddings=int(raw["max_position_embeddings"]), rms_norm_eps=float(raw["rms_norm_eps"]),
                rope_parameters=rope, eos_token_id=raw.get("eos_token_id"),
                tie_word_embeddings=bool(raw.get("tie_word_embeddings", False)),
                attention_bias=bool(raw.get("attention_bias", False)), mlp_bias=bool(raw.get("mlp_bias", False)),
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ModelError(f"cannot read the model config {path}: {exc}") from exc


class RMSNorm(nn.Module):
    def __init__(self, size: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(size, device="meta"))
        self.variance_epsilon = eps


class RotaryEmbedding(nn.Module):
    """transformers' default RoPE frequencies, computed the same way (so positions rotate bit-identically)."""

    def __init__(self, config: LlamaConfig) -> None:
        super().__init__()
        dim = config.head_dim
        base = float(config.rope_parameters["rope_theta"])
        self.register_buffer("inv_freq", 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.float) / dim)),
                             persistent=False)
        self.attention_scaling = 1.0


class Linear(nn.Module):
    """A bias-free projection's weight, which the lean forward multiplies by. Not nn.Linear: initialising
    that (even on the meta device) imports torch._dynamo, ~2 s."""

    def __init__(self, into: int, out: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out, into, device="meta"))


class Embedding(Linear):
    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return F.embedding(ids, self.weight)


class Attention(nn.Module):
    def __init__(self, c: LlamaConfig) -> None:
        super().__init__()
        self.q_proj = Linear(c.hidden_size, c.num_attention_heads * c.head_dim)
        self.k_proj = Linear(c.hidden_size, c.num_key_value_heads * c.head_dim)
        self.v_proj = Linear(c.hidden_size, c.num_key_value_heads * c.head_dim)
        self.o_proj = Linear(c.num_attention_heads * c.head_dim, c.hidden_size)


class MLP(nn.Module):
    def __init__(self, c: LlamaConfig) -> None:
        super().__init__()
        self.gate_proj = Linear(c.hidden_size, c.intermediate_size)
        self.up_proj = Linear(c.hidden_size, c.intermediate_size)
        self.down_proj = Linear(c.intermediate_size, c.hidden_size)


class DecoderLayer(nn.Module):
    def __init__(self, c: LlamaConfig) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.self_attn = Attention(c)
        self.post_attention_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.mlp = MLP(c)


class LlamaBody(nn.Module):
    def __init__(self, c: LlamaConfig) -> None:
        super().__init__()
        self.embed_tokens = Embedding(c.hidden_size, c.vocab_size)
        self.layers = nn.ModuleList(DecoderLayer(c) for _ in range(c.num_hidden_layers))
        self.norm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.rotary_emb = RotaryEmbedding(c)


class LlamaWeights(nn.Module):
    """`model` and `lm_head`, as in transformers' LlamaForCausalLM; no forward of its own."""

    def __init__(self, config: LlamaConfig, model_dir: Path) -> None:
        super().__init__()
        self.config = config
        self.model_dir = Path(model_dir)
        self.model = LlamaBody(config)
        self.lm_head = Linear(config.hidden_size, config.vocab_size)
        self.gguf_blocks: GGUFBlocks | None = None  # the same weights as the GGUF's blocks (kernels/gguf_blocks.py)
        self._transformers: nn.Module | None = None

    @classmethod
    def load(cls, model_dir: Path) -> LlamaWeights:
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        config = LlamaConfig.read(model_dir)
        weights = cls(config, model_dir)
        try:
            tensors = load_file(Path(model_dir) / "model.safetensors")
        except (OSError, SafetensorError) as exc:
            raise ModelError(f"cannot read the model weights in {model_dir}: {exc}") from exc
        if config.tie_word_embeddings:
            tensors["lm_head.weight"] = tensors["model.embed_tokens.weight"]
        try:
            weights.load_state_dict({k: v.float() for k, v in tensors.items()}, strict=True, assign=True)
        except RuntimeError as exc:
            raise ModelError(f"the weights in {model_dir} do not fit its config: {str(exc).splitlines()[0]}") from exc
        if config.tie_word_embeddings:
            weights.lm_head.weight = weights.model.embed_tokens.weight
        return weights.requires_grad_(False).eval()

    def transformers(self) -> nn.Module:
        """transformers' LlamaForCausalLM on this tree's parameters (built on first call; slow to import)."""
        if self._transformers is None:
            from transformers import AutoModelForCausalLM
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()
            model = AutoModelForCausalLM.from_pretrained(self.model_dir, dtype=torch.float32).eval()
            # From now on one set of tensors: this tree takes the transformers model's parameters (which
            # peft merges adapters into, in place) and its own copies are freed.
            self.load_state_dict(model.state_dict(keep_vars=True), strict=True, assign=True)
            object.__setattr__(self, "_transformers", model)  # not a submodule: its parameters are ours
        return self._transformers
