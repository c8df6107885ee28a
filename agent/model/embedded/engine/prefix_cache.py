"""Reuse of shared prompt prefixes in the embedded engine.

Every call of a role starts with the same system message (instructions and few-shot example: 128-207
tokens, a third of an agent call's prompt), so its keys and values are the same in every call. The engine
computes them once per (adapter, token ids) and starts each new row's cache from a copy: the prefill then
runs only over the rest of the prompt. The prefix is the chat template's rendering of the system message
(`EmbeddedChatModel.prefix_length`), so it is a token-exact prefix of the prompt or not used at all.

Calls share more than that. A run's calls repeat its question after the system message, and a training
round's G rollouts of one question send the same planner prompt and, where they read the same source, the
same extractor prompt (67 of 141 prompts of a learning-demo round repeat an earlier one). So the keys/values
of each prefilled prompt are kept too (`PromptCache`, a budget of tokens, least recently used dropped
first), and a new prompt starts from the longest prefix it shares with one of them when that is longer
than its system message. Rows admitted together that share a longer prefix with an earlier one of them
than with anything cached wait for its prefill (`PrefixCache.wait_for_earlier`).

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
from typing import TYPE_CHECKING

import numpy as np
import torch
from deepresearch.agent.config import PROMPT_CACHE_TOKENS

from ..disk_store import keep_newest, replace_atomically
from .kv_batch import KVBatch, new_cache

if TYPE_CHECKING:
    from .jobs import GenerationJob

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
    """Keys/values of recently used system messages, least recently used dropped first (~46 KB per token); the
    base model's also from and to `store` when there is one. Beside them, recent whole prompts (`prompts`)."""

    def __init__(self, limit: int = 8, store: PrefixStore | None = None,
                 prompt_tokens: int = PROMPT_CACHE_TOKENS) -> None:
        self._entries: collections.OrderedDict[tuple[str | None, tuple[int, ...]], LayerStates] = (
            collections.OrderedDict())
        self._limit = limit
        self._store = store
        self.prompts = PromptCache(prompt_tokens)
        self.hits = self.misses = self.loaded = 0

    def start(self, adapter: str | None, prompt_ids: list[int], system_length: int,
              compute: Callable[[list[int], str | None], LayerStates]) -> LayerStates | None:
        """The keys/values a prompt's prefill starts from: the longest prefix it shares with a kept prompt when
        that covers its system message, else the system message's (`compute(ids, adapter)` on a miss)."""
        length, key = self._offer(adapter, prompt_ids, system_length)
        if key is not None:
            return self.prompts.take(key, length)
        if not length:
            return None
        ids = prompt_ids[:length]
        return self.states(adapter, ids, lambda: compute(ids, adapter))

    def wait_for_earlier(self, jobs: list[GenerationJob]) -> list[bool]:
        """For jobs about to be prefilled together: True where an earlier one shares at least MIN_PREFIX more
        tokens with this one than the caches offer it, so it is prefilled after that one and starts from its
        keys/values. The first job never waits."""
        if self.prompts.limit <= 0 or len(jobs) < 2:  # most admissions are one job: no scan of the cache
            return [False] * len(jobs)
        offered = [self._offer(job.adapter, job.prompt_ids, job.prefix_len)[0] for job in jobs]
        heads = [np.asarray(job.prompt_ids[:-1], dtype=np.int64) for job in jobs]
        return [any(earlier.adapter == job.adapter
                    and common_prefix_length(heads[i], heads[j]) >= offered[i] + MIN_PREFIX
                    for j, earlier in enumerate(jobs[:i])) for i, job in enumerate(jobs)]

    def _offer(self, adapter: str | None, prompt_ids: list[int], system_length: int) -> tuple[int, tuple | None]:
        """How many of the prompt's tokens `start` gives, and the kept prompt they come from (None: the system
        message's)."""
        system = system_length if MIN_PREFIX <= system_length < len(prompt_ids) else 0
        shared, key = self.prompts.shared_length(adapter, prompt_ids)
        if key is not None and shared >= max(system, MIN_PREFIX):
            return shared, key
        return system, None

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
        self.prompts.clear()


class PromptCache:
    """The keys/values of recently prefilled prompts, per adapter, within a budget of `limit` tokens (least
    recently used dropped first). Only the engine's thread uses it."""

    def __init__(self, limit: int = PROMPT_CACHE_TOKENS) -> None:
        self._entries: collections.OrderedDict[tuple[str | None, tuple[int, ...]], tuple[np.ndarray, LayerStates]] = (
            collections.OrderedDict())
        self.limit = limit
        self._held = 0
        self.hits = self.shared_tokens = 0

    def shared_length(self, adapter: str | None, ids: list[int]) -> tuple[int, tuple | None]:
        """The longest prefix of `ids` a kept prompt of `adapter` shares (at most all but the last token, which
        the prefill must feed for its logits), and that prompt's key."""
        if not self._entries or len(ids) <= MIN_PREFIX:
            return 0, None
        wanted = np.asarray(ids[:-1], dtype=np.int64)
        best, best_key = 0, None
        for key, (kept, _) in self._entries.items():
            if key[0] == adapter and (length := common_prefix_length(wanted, kept)) > best:
                best, best_key = length, key
        return best, best_key

    def take(self, key: tuple, length: int) -> LayerStates:
        """The first `length` positions of a kept prompt's keys/values (views: the batch copies them)."""
        self._entries.move_to_end(key)
        self.hits += 1
        self.shared_tokens += length
        return [(k[:, :, :length], v[:, :, :length]) for k, v in self._entries[key][1]]

    def remember(self, adapter: str | None, ids: list[int], states: LayerStates) -> None:
        key = (adapter, tuple(ids))
        if key in self._entries:
            self._entries.move_to_end(key)
            return
        if len(ids) > self.limit:
            return
        self._entries[key] = (np.asarray(ids, dtype=np.int64), states)
        self._held += len(ids)
        while self._held > self.limit:
            (_, dropped), _ = self._entries.popitem(last=False)
            self._held -= len(dropped)

    def remember_batch(self, kv: KVBatch, jobs: list[GenerationJob]) -> None:
        """Keep the prompts of a batch just prefilled (row i's real columns start with jobs[i]'s, hole-free)."""
        if self.limit <= 0:
            return
        real = kv.attention_mask.sum(dim=1)
        for row, job in enumerate(jobs):
            ids = job.prompt_ids
            if len(ids) < MIN_PREFIX or (job.adapter, tuple(ids)) in self._entries:
                continue
            first = kv.length - int(real[row])
            columns = slice(first, first + len(ids))
            self.remember(job.adapter, ids, [(layer.keys[row : row + 1, :, columns].clone(),
                                              layer.values[row : row + 1, :, columns].clone())
                                             for layer in kv.cache.layers])

    def clear(self) -> None:
        self._entries.clear()
        self._held = 0


def common_prefix_length(a: np.ndarray, b: np.ndarray) -> int:
    n = min(len(a), len(b))
    differs = np.flatnonzero(a[:n] != b[:n])
    return int(differs[0]) if len(differs) else n


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
