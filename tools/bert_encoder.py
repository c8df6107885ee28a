"""A BERT encoder in plain torch, for the shipped sentence-embedding model (all-MiniLM-L6-v2).

Why: importing transformers' BertModel pulls in torch._dynamo and triton, ~2 s of the first memory recall
in every `ask` (before the planner can start), longer than the embedding itself. This computes BertModel's
eval-mode forward (absolute positions, GELU, LayerNorm after each block) on the checkpoint's own tensors;
tests/tools/test_embedding.py holds the resulting vectors to sentence-transformers' own.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.nn.functional as F


class NotPlainBert(ValueError):
    """The checkpoint is not a BERT this encoder computes exactly."""


class BertEncoder:
    def __init__(self, model_dir: Path) -> None:
        from safetensors.torch import load_file

        config = json.loads((Path(model_dir) / "config.json").read_text())
        if (config.get("model_type") != "bert" or config.get("hidden_act") != "gelu"
                or config.get("position_embedding_type", "absolute") != "absolute"):
            raise NotPlainBert(f"{model_dir} is not a plain BERT (model_type, hidden_act or positions differ)")
        tensors = load_file(Path(model_dir) / "model.safetensors")
        self._w = {name.removeprefix("bert."): t.float() for name, t in tensors.items()}
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.max_positions = int(config["max_position_embeddings"])

    def _norm(self, x: torch.Tensor, name: str) -> torch.Tensor:
        return F.layer_norm(x, x.shape[-1:], self._w[f"{name}.weight"], self._w[f"{name}.bias"], self.eps)

    def _dense(self, x: torch.Tensor, name: str) -> torch.Tensor:
        return F.linear(x, self._w[f"{name}.weight"], self._w[f"{name}.bias"])

    def __call__(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Last hidden states [rows, tokens, hidden] of right-padded `ids` (mask 1 = a real token)."""
        w = self._w
        rows, length = ids.shape
        x = (F.embedding(ids, w["embeddings.word_embeddings.weight"])
             + w["embeddings.position_embeddings.weight"][:length]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._norm(x, "embeddings.LayerNorm")
        visible = mask.bool()[:, None, None, :]  # every query sees the real keys of its row

        def split(t: torch.Tensor) -> torch.Tensor:  # [rows, tokens, hidden] → [rows, heads, tokens, dim]
            return t.view(rows, length, self.heads, -1).transpose(1, 2)

        for i in range(self.layers):
            p = f"encoder.layer.{i}"
            q, k, v = (split(self._dense(x, f"{p}.attention.self.{n}")) for n in ("query", "key", "value"))
            context = F.scaled_dot_product_attention(q, k, v, attn_mask=visible)
            context = context.transpose(1, 2).reshape(rows, length, -1)
            x = self._norm(x + self._dense(context, f"{p}.attention.output.dense"), f"{p}.attention.output.LayerNorm")
            hidden = F.gelu(self._dense(x, f"{p}.intermediate.dense"))
            x = self._norm(x + self._dense(hidden, f"{p}.output.dense"), f"{p}.output.LayerNorm")
        return x
