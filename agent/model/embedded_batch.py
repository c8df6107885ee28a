"""The KV-cache state of the rows the embedded engine is decoding together.

Rows are left-padded to one cache length. A new group of requests is prefilled on its own and then
merged in (both sides padded on the left to a common length), finished rows are dropped, and columns
that are padding for every remaining row are trimmed: continuous batching on a plain DynamicCache.
Positions are counted per row (real tokens only), so padding never shifts a row's RoPE positions.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from transformers import DynamicCache


class KVBatch:
    """Cache, attention mask ([rows, length], 1 = real token) and next position per row."""

    def __init__(self, cache: DynamicCache, attention_mask: torch.Tensor, next_positions: torch.Tensor) -> None:
        self.cache = cache
        self.attention_mask = attention_mask
        self.next_positions = next_positions

    @property
    def rows(self) -> int:
        return int(self.attention_mask.shape[0])

    @property
    def length(self) -> int:
        return int(self.attention_mask.shape[1])

    def step_inputs(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Grow the mask by one real column for the token about to be fed; return (mask, positions)."""
        ones = torch.ones((self.rows, 1), dtype=self.attention_mask.dtype)
        self.attention_mask = torch.cat([self.attention_mask, ones], dim=1)
        positions = self.next_positions.unsqueeze(1).clone()
        self.next_positions += 1
        return self.attention_mask, positions

    def keep(self, row_indices: list[int]) -> None:
        """Drop every row not listed, then trim columns that are padding for all that remain."""
        index = torch.tensor(row_indices, dtype=torch.long)
        for layer in self.cache.layers:
            layer.keys = layer.keys.index_select(0, index)
            layer.values = layer.values.index_select(0, index)
        self.attention_mask = self.attention_mask.index_select(0, index)
        self.next_positions = self.next_positions.index_select(0, index)
        self._trim_left()

    def _trim_left(self) -> None:
        real_per_column = self.attention_mask.sum(dim=0)
        nonzero = torch.nonzero(real_per_column, as_tuple=False)
        first_real = int(nonzero[0]) if len(nonzero) else self.length
        if first_real == 0:
            return
        for layer in self.cache.layers:
            layer.keys = layer.keys[:, :, first_real:, :]
            layer.values = layer.values[:, :, first_real:, :]
        self.attention_mask = self.attention_mask[:, first_real:]

    def merge(self, other: KVBatch) -> None:
        """Append `other`'s rows (after this batch's rows), padding the shorter side on the left."""
        length = max(self.length, other.length)
        pad_self, pad_other = length - self.length, length - other.length
        for mine, theirs in zip(self.cache.layers, other.cache.layers, strict=True):
            mine.keys = torch.cat([_pad_seq(mine.keys, pad_self), _pad_seq(theirs.keys, pad_other)], dim=0)
            mine.values = torch.cat([_pad_seq(mine.values, pad_self), _pad_seq(theirs.values, pad_other)], dim=0)
        self.attention_mask = torch.cat(
            [F.pad(self.attention_mask, (pad_self, 0)), F.pad(other.attention_mask, (pad_other, 0))], dim=0
        )
        self.next_positions = torch.cat([self.next_positions, other.next_positions])


def _pad_seq(states: torch.Tensor, pad: int) -> torch.Tensor:
    """Left-pad [rows, heads, length, head_dim] along `length` with zeros."""
    return F.pad(states, (0, 0, pad, 0)) if pad else states


def left_padded(prompts: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Input ids and mask for a group prefill, plus each row's positions (0 at its first real token)."""
    length = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), length), pad_id, dtype=torch.long)
    mask = torch.zeros((len(prompts), length), dtype=torch.long)
    for row, prompt in enumerate(prompts):
        ids[row, length - len(prompt) :] = torch.tensor(prompt, dtype=torch.long)
        mask[row, length - len(prompt) :] = 1
    positions = (mask.cumsum(dim=1) - 1).clamp(min=0)
    return ids, mask, positions
