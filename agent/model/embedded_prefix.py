"""Reuse of shared prompt prefixes in the embedded engine.

Every call of a role starts with the same system message (instructions and few-shot example: 128-207
tokens, a third of an agent call's prompt), so its keys and values are the same in every call. The engine
computes them once per (adapter, token ids) and starts each new row's cache from a copy: the prefill then
runs only over the rest of the prompt. The prefix is the chat template's rendering of the system message
(`EmbeddedChatModel.prefix_length`), so it is a token-exact prefix of the prompt or not used at all.

Causal attention makes a prefix's keys/values independent of what follows; computed in a pass of their
own they differ from a whole-prompt pass only by float rounding (matmuls of another shape), as a
different batch composition already does. Entries are dropped when an adapter is loaded or unloaded.
"""

from __future__ import annotations

import collections
from collections.abc import Callable

import torch

from .embedded_batch import KVBatch, new_cache, pad_left

MIN_PREFIX = 32  # shorter shared prefixes are not worth a cache entry
LayerStates = list[tuple[torch.Tensor, torch.Tensor]]  # per layer: keys, values [1, heads, length, dim]


class PrefixCache:
    """Keys/values of recently used prefixes, least recently used dropped first (~46 KB per token)."""

    def __init__(self, limit: int = 8) -> None:
        self._entries: collections.OrderedDict[tuple[str | None, tuple[int, ...]], LayerStates] = (
            collections.OrderedDict())
        self._limit = limit
        self.hits = self.misses = 0

    def states(self, adapter: str | None, ids: list[int], compute: Callable[[], LayerStates]) -> LayerStates:
        key = (adapter, tuple(ids))
        if key in self._entries:
            self.hits += 1
            self._entries.move_to_end(key)
            return self._entries[key]
        self.misses += 1
        self._entries[key] = states = compute()
        while len(self._entries) > self._limit:
            self._entries.popitem(last=False)
        return states

    def clear(self) -> None:
        self._entries.clear()


def batch_from_prefixes(config: object, prefixes: list[LayerStates | None]) -> KVBatch:
    """A KV batch whose row i holds prefix i (left-padded to the longest; a row without one is all padding),
    ready for the rest of each prompt to be fed as one ragged step (`KVBatch.step_inputs`). With no prefix
    at all it is empty, and that step is a plain left-padded prefill."""
    lengths = [states[0][0].shape[2] if states else 0 for states in prefixes]
    width = max(lengths)
    cache = new_cache(config)
    some = next((states for states in prefixes if states), None)
    if some is None:
        empty = torch.zeros((len(prefixes), 0), dtype=torch.long)
        return KVBatch(cache, empty, torch.zeros(len(prefixes), dtype=torch.long))
    for layer_index, layer in enumerate(cache.layers):
        keys, values = [], []
        for states, length in zip(prefixes, lengths, strict=True):
            k, v = states[layer_index] if states else (some[layer_index][0][:, :, :0], some[layer_index][1][:, :, :0])
            keys.append(pad_left(k, width - length))
            values.append(pad_left(v, width - length))
        layer.update(torch.cat(keys), torch.cat(values))
    mask = torch.zeros((len(prefixes), width), dtype=torch.long)
    for row, length in enumerate(lengths):
        mask[row, width - length:] = 1
    return KVBatch(cache, mask, torch.tensor(lengths, dtype=torch.long))
