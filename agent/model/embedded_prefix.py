"""Reuse of shared prompt prefixes in the embedded engine.

Every call of a role starts with the same system message (instructions and few-shot example: 128-207
tokens, a third of an agent call's prompt), so its keys and values are the same in every call. The engine
computes them once per (adapter, token ids) and starts each new row's cache from a copy: the prefill then
runs only over the rest of the prompt. The prefix is the chat template's rendering of the system message
(`EmbeddedChatModel.prefix_length`), so it is a token-exact prefix of the prompt or not used at all.

Causal attention makes a prefix's keys/values independent of what follows; computed in a pass of their
own they differ from a whole-prompt pass only by float rounding (matmuls of another shape), as a
different batch composition already does. Entries are dropped when an adapter is loaded or unloaded.

The base model's prefixes are also kept on disk (`PrefixStore`, beside the converted weights), so the
next process — the next `deepresearch ask` — starts with them instead of spending ~1.5 s recomputing
them. Files are keyed by the weights file, the computation (forward kind, threads) and the token ids; an
adapter's prefixes stay in memory only (an adapter can be replaced under the same name).
"""

from __future__ import annotations

import collections
import hashlib
import json
import logging
from collections.abc import Callable
from pathlib import Path

import torch

from .disk_store import keep_newest, replace_atomically
from .embedded_batch import KVBatch, new_cache

MIN_PREFIX = 32  # shorter shared prefixes are not worth a cache entry
LayerStates = list[tuple[torch.Tensor, torch.Tensor]]  # per layer: keys, values [1, heads, length, dim]
STORE_DIR_NAME = "prefix-cache"
STORE_LIMIT = 32  # files kept (~10 MB each); the least recently written go first

log = logging.getLogger(__name__)


class PrefixStore:
    """Prefix keys/values on disk, one safetensors file per (weights, computation, token ids). `computed_by`
    names what decides their rounding (forward kind, threads), so a file holds exactly what this process
    would compute. Every failure to read or write is a miss: the prefix is computed as without a store."""

    def __init__(self, directory: Path, weights_file: Path, computed_by: str) -> None:
        self.directory = Path(directory)
        stat = Path(weights_file).stat()
        self._identity = f"{Path(weights_file).resolve()}:{stat.st_size}:{stat.st_mtime_ns}:{computed_by}"

    def _path(self, ids: list[int]) -> Path:
        digest = hashlib.sha256(json.dumps([self._identity, ids]).encode()).hexdigest()[:32]
        return self.directory / f"{digest}.safetensors"

    def load(self, ids: list[int]) -> LayerStates | None:
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        path = self._path(ids)
        try:
            stacked = load_file(path)["kv"]  # [layers, 2, 1, kv heads, length, dim]
        except FileNotFoundError:
            return None
        except (OSError, KeyError, SafetensorError) as exc:
            log.warning("ignoring unreadable prefix cache file %s: %s", path, exc)
            return None
        if stacked.dim() != 6 or stacked.shape[1] != 2 or stacked.shape[4] != len(ids):
            log.warning("ignoring prefix cache file %s of shape %s", path, tuple(stacked.shape))
            return None
        return [(layer[0], layer[1]) for layer in stacked]

    def save(self, ids: list[int], states: LayerStates) -> None:
        from safetensors.torch import save_file

        stacked = torch.stack([torch.stack(pair) for pair in states]).contiguous()
        try:
            replace_atomically(self._path(ids), lambda tmp: save_file({"kv": stacked}, tmp))
            keep_newest(self.directory, "*.safetensors", STORE_LIMIT)
        except OSError as exc:
            log.warning("cannot write the prefix cache in %s: %s", self.directory, exc)


class PrefixCache:
    """Keys/values of recently used prefixes, least recently used dropped first (~46 KB per token); the
    base model's also from and to `store` when there is one."""

    def __init__(self, limit: int = 8, store: PrefixStore | None = None) -> None:
        self._entries: collections.OrderedDict[tuple[str | None, tuple[int, ...]], LayerStates] = (
            collections.OrderedDict())
        self._limit = limit
        self._store = store
        self.hits = self.misses = self.loaded = 0

    def states(self, adapter: str | None, ids: list[int], compute: Callable[[], LayerStates]) -> LayerStates:
        key = (adapter, tuple(ids))
        if key in self._entries:
            self.hits += 1
            self._entries.move_to_end(key)
            return self._entries[key]
        self.misses += 1
        store = self._store if adapter is None else None
        states = store.load(ids) if store else None
        if states is not None:
            self.loaded += 1
        else:
            states = compute()
            if store:
                store.save(ids, states)
        self._entries[key] = states
        while len(self._entries) > self._limit:
            self._entries.popitem(last=False)
        return states

    def clear(self) -> None:
        self._entries.clear()


def batch_from_prefixes(layers: int, prefixes: list[LayerStates | None]) -> KVBatch:
    """A KV batch whose row i holds prefix i (left-padded to the longest; a row without one is all padding),
    ready for the rest of each prompt to be fed as one ragged step (`KVBatch.step_inputs`). With no prefix
    at all it is empty, and that step is a plain left-padded prefill."""
    lengths = [states[0][0].shape[2] if states else 0 for states in prefixes]
    width = max(lengths)
    cache = new_cache(layers)
    some = next((states for states in prefixes if states), None)
    if some is None:
        empty = torch.zeros((len(prefixes), 0), dtype=torch.long)
        return KVBatch(cache, empty, torch.zeros(len(prefixes), dtype=torch.long))
    for layer_index, layer in enumerate(cache.layers):
        parts = []
        for states, length in zip(prefixes, lengths, strict=True):
            k, v = states[layer_index] if states else (some[layer_index][0][:, :, :0], some[layer_index][1][:, :, :0])
            parts.append((k, v, width - length))
        layer.stack(parts)
    mask = torch.zeros((len(prefixes), width), dtype=torch.long)
    for row, length in enumerate(lengths):
        mask[row, width - length:] = 1
    return KVBatch(cache, mask, torch.tensor(lengths, dtype=torch.long))
