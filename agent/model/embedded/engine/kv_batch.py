"""The KV-cache state of the rows the embedded engine is decoding together.

Rows are left-padded to one cache length. A new group of requests is prefilled on its own and then
merged in (both sides padded on the left to a common length), finished rows are dropped, and columns
that are padding for every remaining row are trimmed: continuous batching on a plain DynamicCache.
Positions are counted per row (real tokens only), so padding never shifts a row's RoPE positions.
Each layer keeps its keys/values in buffers with spare room (`GrowingLayer`): a decode step writes one
column in place instead of copying the whole cache, which at agent-sized prompts (~1000 tokens, 8 rows)
would move about as many bytes per step as the weights themselves.

Jump-forward steps are ragged: a row may feed several tokens while the others feed one. The step is
left-padded to its widest row, so pad columns sit inside the cache as masked holes (as do a rejected
draft's columns, `reject`); transformers' masking_utils reads this 2D mask per (row, key column), so holes
cost attention work but never change a result. `compact` squeezes them out when they pile up.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

HEADROOM = 256  # columns allocated beyond the current length; doubled when they run out


class GrowingLayer(DynamicLayer):
    """A DynamicLayer whose `keys`/`values` are views into larger buffers: spare columns on the right for the
    steps to come, and after rows left or were trimmed, spare rows and dead columns on the left. Rows that
    leave, columns trimmed and rows that join mostly move no byte of the other rows (`keep_rows`,
    `join_rows`): a fresh copy of the whole cache each time cost ~6 s of a 46 s batch-8 replay of the agent
    workload (new pages, then copied into)."""

    _start = 0  # the buffers' column of the cache's first column

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args, **kwargs
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if not self.is_initialized:
            self.dtype, self.device = key_states.dtype, key_states.device
            self.is_initialized = True
            self._set([(key_states, value_states, 0)])
            return self.keys, self.values
        length, new = self.keys.shape[-2], key_states.shape[-2]
        if self._start + length + new > self._key_buffer.shape[-2]:
            self._set([(self.keys, self.values, 0)], extra=new)
        end = self._start + length
        self._key_buffer[: self.rows, :, end : end + new] = key_states
        self._value_buffer[: self.rows, :, end : end + new] = value_states
        self._view(length + new)
        return self.keys, self.values

    @property
    def rows(self) -> int:
        return int(self.keys.shape[0])

    def crop(self, length: int) -> None:
        """Forget the columns from `length` on (their buffer space is reused by the next update)."""
        self._view(length)

    def set_states(self, keys: torch.Tensor, values: torch.Tensor) -> None:
        """Replace the content (after rows were dropped or trimmed)."""
        self._set([(keys, values, 0)])

    def stack(self, parts: Sequence[tuple[torch.Tensor, torch.Tensor, int]]) -> None:
        """Set the content to the (keys, values, left padding) of `parts`, row groups stacked in order and
        each padded with zeros on the left to one length (rows merged in, the prefixes of a new batch). One
        copy into the new buffers: no padded or concatenated intermediate of the whole cache."""
        if not self.is_initialized:
            self.dtype, self.device = parts[0][0].dtype, parts[0][0].device
            self.is_initialized = True
        self._set(parts)

    def keep_rows(self, rows: Sequence[int], first: int) -> None:
        """Keep the listed rows, in that order, from column `first` on. In place: `rows[i]` is `i` or a row past
        the kept count (`KVBatch.keep`'s order), so a row moves into a dropped row's slot and no copy overwrites
        a row still to be read; the dropped columns become dead space on the left."""
        columns = slice(self._start + first, self._start + self.keys.shape[-2])
        for slot, row in enumerate(rows):
            if slot != row:
                for buffer in (self._key_buffer, self._value_buffer):
                    buffer[slot, :, columns] = buffer[row, :, columns]
        length = self.keys.shape[-2] - first
        self._start += first
        self._view(length, len(rows))

    def join_rows(self, keys: torch.Tensor, values: torch.Tensor, pad_self: int, pad_other: int,
                  reserve_rows: int) -> None:
        """Append the rows of `keys`/`values` after this layer's, the side that is shorter padded with zeros on
        the left. In place when the buffers have the rows and the dead columns on the left it takes; else one
        copy into new buffers with room for twice the rows, up to `reserve_rows` (a large max_batch with few
        rows in flight does not reserve memory for all of them)."""
        rows, joined = self.rows, keys.shape[0]
        length = self.keys.shape[-2] + pad_self
        if rows + joined > self._key_buffer.shape[0] or pad_self > self._start:
            # Room on the left too: a longer prompt than the batch's, joining later, is written in place.
            self._set([(self.keys, self.values, pad_self), (keys, values, pad_other)],
                      reserve_rows=min(reserve_rows, 2 * (rows + joined)), left=HEADROOM)
            return
        self._start -= pad_self
        start = self._start
        for buffer, states in ((self._key_buffer, keys), (self._value_buffer, values)):
            buffer[:rows, :, start : start + pad_self] = 0
            buffer[rows : rows + joined, :, start : start + pad_other] = 0
            buffer[rows : rows + joined, :, start + pad_other : start + length] = states
        self._view(length, rows + joined)

    def _view(self, length: int, rows: int | None = None) -> None:
        rows = self.rows if rows is None else rows
        columns = slice(self._start, self._start + length)
        self.keys = self._key_buffer[:rows, :, columns]
        self.values = self._value_buffer[:rows, :, columns]

    def _set(self, parts: Sequence[tuple[torch.Tensor, torch.Tensor, int]], extra: int = 0,
             reserve_rows: int = 0, left: int = 0) -> None:
        """New buffers holding `parts` (see `stack`), with room for `extra` more columns and `left` dead ones."""
        keys, values, pad = parts[0]
        _, heads, _, dim = keys.shape
        rows, length = sum(k.shape[0] for k, _, _ in parts), keys.shape[2] + pad
        capacity = left + length + extra + max(HEADROOM, length)
        key_buffer = keys.new_empty((max(rows, reserve_rows), heads, capacity, dim))
        value_buffer = values.new_empty(key_buffer.shape)
        first = 0
        for part_keys, part_values, part_pad in parts:
            last = first + part_keys.shape[0]
            for buffer, states in ((key_buffer, part_keys), (value_buffer, part_values)):
                buffer[first:last, :, left : left + part_pad] = 0
                buffer[first:last, :, left + part_pad : left + length] = states
            first = last
        self._key_buffer, self._value_buffer, self._start = key_buffer, value_buffer, left
        self._view(length, rows)


def new_cache(layers: int) -> DynamicCache:
    """An empty cache for a model of `layers` layers, whose layers grow in place."""
    cache = DynamicCache()
    cache.layers = [GrowingLayer() for _ in range(layers)]
    return cache


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

    def step_inputs(self, counts: list[int] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Grow the mask by the columns about to be fed; return (mask, positions) for them.

        `counts[i]` real tokens are fed for row i (1 when None). A ragged step (jump-forward: some rows
        append a forced run, others one token) is left-padded to the widest row: row i's pad columns
        come first and are masked out here and in every later step, so each row's real tokens stay
        contiguous at the end of the step and its next logits are those of the last column.
        """
        counts_t = torch.ones(self.rows, dtype=torch.long) if counts is None else torch.tensor(counts)
        width = int(counts_t.max())
        column = torch.arange(width).unsqueeze(0)
        first_real = (width - counts_t).unsqueeze(1)
        new = (column >= first_real).to(self.attention_mask.dtype)
        self.attention_mask = torch.cat([self.attention_mask, new], dim=1)
        # Real tokens get consecutive positions; pad columns reuse the first one (they are never attended).
        positions = self.next_positions.unsqueeze(1) + (column - first_real).clamp(min=0)
        self.next_positions += counts_t
        return self.attention_mask, positions

    def reject(self, row: int, columns: int) -> None:
        """Mask out the last `columns` of `row` (a draft's rejected tokens); its next position moves back.
        Trailing columns no row uses any more are cut off: a single row then keeps a hole-free cache, and
        with no hole at all the model takes its plain causal path instead of building a 4D mask."""
        self.attention_mask[row, self.length - columns :] = 0
        self.next_positions[row] -= columns
        used = torch.nonzero(self.attention_mask.sum(dim=0), as_tuple=False)
        length = int(used[-1]) + 1 if len(used) else 0
        if length < self.length:
            for layer in self.cache.layers:
                layer.crop(length)
            self.attention_mask = self.attention_mask[:, :length]

    @property
    def holes(self) -> int:
        """Columns `compact` would save: the cache length beyond the longest row's real tokens."""
        return self.length - int(self.attention_mask.sum(dim=1).max())

    def compact(self) -> None:
        """Move every row's real columns to the right end (dropping the holes ragged steps left), so
        attention stops paying for them. A full copy of the cache: call it only when holes pile up."""
        mask = self.attention_mask.bool()
        real = mask.sum(dim=1)
        length = int(real.max())
        # Row i's real columns, in order, land at length - real[i] ... length - 1; the rest are zeros.
        order = torch.argsort((~mask).to(torch.int8) * 2 - 1, dim=1, stable=True)  # real columns first
        starts = (length - real).unsqueeze(1)
        target = torch.arange(length).unsqueeze(0)
        take = (target - starts).clamp(min=0)  # index into `order` for each target column
        source = torch.gather(order, 1, take)
        keep = target >= starts
        index = source.view(self.rows, 1, length, 1)
        for layer in self.cache.layers:
            expand = (-1, layer.keys.shape[1], -1, layer.keys.shape[3])
            keys = torch.gather(layer.keys, 2, index.expand(*expand)) * keep.view(self.rows, 1, length, 1)
            values = torch.gather(layer.values, 2, index.expand(*expand)) * keep.view(self.rows, 1, length, 1)
            layer.set_states(keys, values)
        self.attention_mask = keep.to(self.attention_mask.dtype)

    def keep(self, row_indices: list[int]) -> list[int]:
        """Drop every row not listed and the leading columns that are padding for all that remain. Returns the
        rows' new order: a kept row from past the survivors' count fills a dropped row's slot, so at most one
        row moves per row dropped (in order, every row after the first dropped one would move)."""
        kept = set(row_indices)
        movers = iter(row for row in row_indices if row >= len(row_indices))
        order = [row if row in kept else next(movers) for row in range(len(row_indices))]
        index = torch.tensor(order, dtype=torch.long)
        mask = self.attention_mask.index_select(0, index)
        nonzero = torch.nonzero(mask.sum(dim=0), as_tuple=False)
        first_real = int(nonzero[0]) if len(nonzero) else mask.shape[1]
        for layer in self.cache.layers:
            layer.keep_rows(order, first_real)
        self.attention_mask = mask[:, first_real:]
        self.next_positions = self.next_positions.index_select(0, index)
        return order

    def merge(self, other: KVBatch, reserve_rows: int = 0) -> None:
        """Append `other`'s rows (after this batch's rows), padding the shorter side on the left. When the
        layers' buffers must grow, they get room for twice the rows, up to `reserve_rows` (the engine's batch
        size), so the next rows to join are written in place."""
        length = max(self.length, other.length)
        pad_self, pad_other = length - self.length, length - other.length
        for mine, theirs in zip(self.cache.layers, other.cache.layers, strict=True):
            mine.join_rows(theirs.keys, theirs.values, pad_self, pad_other, reserve_rows)
        self.attention_mask = torch.cat(
            [F.pad(self.attention_mask, (pad_self, 0)), F.pad(other.attention_mask, (pad_other, 0))], dim=0
        )
        self.next_positions = torch.cat([self.next_positions, other.next_positions])


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
