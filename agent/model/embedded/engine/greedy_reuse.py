"""Identical greedy requests share one decode in the embedded model.

A greedy (temperature 0) request is a function of its prompt, grammar, limits and adapter: decoding it again
gives the same tokens (up to the float rounding of another batch composition). Training sends many such
repeats: the roles left out of the update decode greedily, and a group's G runs of one question send them
the same prompt wherever they read the same source (51 of the 141 calls of a learning-demo round, 36 % of
its summed model time). `GreedyResults` keeps the engine job of each recent greedy request by key: a request
equal to one in flight waits for the same job, one equal to a finished one takes its result. A caller that
stops waiting cancels the job only when no other caller still waits for it. A (re)loaded or unloaded
adapter's entries are dropped; the other adapters' and the base model's stay.
"""

from __future__ import annotations

import collections
import json
import threading
from dataclasses import dataclass
from typing import Any

from ...types import ChatRequest
from .jobs import GenerationJob

GreedyKey = tuple[Any, ...]
GREEDY_RESULTS = 4096  # requests remembered (token ids and logprobs: a few KB each)


@dataclass
class SharedJob:
    key: GreedyKey
    job: GenerationJob
    waiters: int = 1


class GreedyResults:
    """Jobs of recent greedy requests by key; `limit` 0 shares nothing (every method then does nothing)."""

    def __init__(self, limit: int = GREEDY_RESULTS) -> None:
        self._entries: collections.OrderedDict[GreedyKey, SharedJob] = collections.OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()  # callers may be on several event loops
        self.reused = 0

    def key(self, adapter: str | None, prompt_ids: list[int], request: ChatRequest) -> GreedyKey | None:
        """What decides a greedy request's output; None for a sampled request (its draws are its own)."""
        sampling = request.sampling
        if sampling.temperature != 0.0 or self._limit <= 0:
            return None
        schema = None if request.json_schema is None else json.dumps(request.json_schema, sort_keys=True)
        return adapter, tuple(prompt_ids), schema, sampling.max_tokens, tuple(sampling.stop)

    def join(self, key: GreedyKey | None) -> SharedJob | None:
        """The job of an equal earlier request, now also waited for by the caller; None if there is none (or
        it failed or was cancelled: the caller decodes anew)."""
        if key is None:
            return None
        with self._lock:
            shared = self._entries.get(key)
            if shared is None:
                return None
            future = shared.job.future
            if shared.job.cancelled or (future.done() and (future.cancelled() or future.exception() is not None)):
                del self._entries[key]
                return None
            shared.waiters += 1
            self._entries.move_to_end(key)
            self.reused += 1
            return shared

    def add(self, key: GreedyKey | None, job: GenerationJob) -> SharedJob | None:
        """Remember a job just submitted; the least recently used entries go beyond the limit."""
        if key is None:
            return None
        shared = SharedJob(key, job)
        with self._lock:
            self._entries[key] = shared
            while len(self._entries) > self._limit:
                self._entries.popitem(last=False)
        return shared

    def leave(self, shared: SharedJob) -> None:
        """A caller stopped waiting: the last one to go cancels the job, which is then forgotten."""
        with self._lock:
            shared.waiters -= 1
            if shared.waiters > 0 or shared.job.future.done():
                return
            shared.job.cancelled = True
            if self._entries.get(shared.key) is shared:
                del self._entries[shared.key]

    def forget(self, adapter: str | None) -> None:
        """Drop the entries of `adapter` (its weights changed)."""
        with self._lock:
            for key in [key for key in self._entries if key[0] == adapter]:
                del self._entries[key]
