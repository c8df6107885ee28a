"""The embedded model's batching engine: one background thread decodes every concurrent request together.

Requests arrive from any thread or event loop as `GenerationJob`s. Between decode steps the worker
admits waiting jobs (prefilled as one left-padded group, then merged into the running batch), runs
adapter load/unload commands, and drops finished or cancelled rows — continuous batching, so a late
request never waits for a whole batch to drain. Each step masks constrained rows with their grammar
and samples every row with its own parameters and seed.

Jump-forward (decoding/jump_forward.py): where a constrained row's grammar forces a continuation string, its
canonical tokens go into the next forward pass together, beside the other rows' single tokens (a
ragged step, see KVBatch.step_inputs), either appended unsampled ("forced") or as a draft that the
pass's own logits check ("verified"). A run at the start of a completion rides along with the prefill.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from ...base import ModelError
from ...types import Timings
from ..config import EngineConfig
from ..decoding.grammar import allocate_bitmask
from ..decoding.jump_forward import DraftMemo, accept_forced
from ..decoding.sampling import RowSampler
from ..decoding.step_logits import StepLogits, few_columns, masked_column
from ..layers.forward import ModelForward
from ..models.adapters import AdapterSet
from .jobs import GenerationJob, GenerationResult
from .kv_batch import KVBatch, new_cache
from .prefix_cache import LayerStates, PrefixCache, PrefixStore, batch_from_prefixes

log = logging.getLogger(__name__)

# Gather requests that arrive together (asyncio.gather) into one prefill instead of one per request.
ADMIT_WINDOW_S = 0.003


@dataclass
class _Row:
    """A job being decoded."""

    job: GenerationJob
    sampler: RowSampler
    admitted_at: float
    prefill_s: float = 0.0
    first_token_at: float = 0.0
    token_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    forced_positions: list[int] = field(default_factory=list)
    narrowed_positions: list[int] = field(default_factory=list)  # drawn from the closing tiers (grammar.py)
    fed: int = 0  # completion tokens already in the KV cache; the rest go into the next forward pass
    passes: int = 0  # forward passes whose logits drew this row's tokens
    draft: list[int] = field(default_factory=list)  # "verified" jump-forward: fed, not yet confirmed
    draft_forced: bool = False  # the draft spells a string the grammar forces: a few tokens allowed at each
    learning: tuple[str, int] | None = None  # a forced string and where it began, for the DraftMemo
    finish_reason: str | None = None
    text: str | None = None  # set when a stop string cut the text

    def unfed(self) -> list[int]:
        return self.token_ids[self.fed :] + self.draft


@dataclass
class _Command:
    run: Callable[[], Any]
    future: concurrent.futures.Future[Any]
    blocked_by_adapter: str | None = None  # wait until no running row uses this adapter


class BatchingEngine:
    def __init__(
        self,
        adapters: AdapterSet,
        tokenizer: Any,
        tokenizer_lock: threading.Lock,
        config: EngineConfig,
        *,
        eos_ids: set[int],
        pad_id: int,
        prefix_store: PrefixStore | None = None,
    ) -> None:
        model_config = adapters.weights.config
        self._adapters = adapters
        self._tokenizer = tokenizer
        self._tokenizer_lock = tokenizer_lock
        self._eos_ids = eos_ids
        self._pad_id = pad_id
        self._max_batch = config.max_batch  # rows decoded together
        self._max_context = int(model_config.max_position_embeddings)  # prompt + completion tokens of one row
        self._threads = config.thread_count  # torch threads of the engine's thread
        self._jump_forward = config.jump_forward
        self.layers = int(model_config.num_hidden_layers)
        self.forward = ModelForward(adapters, config.forward, config.bf16_threads)  # every pass, on this thread
        self.few_choice_logits = True  # forced drafts' columns projected on the allowed tokens (step_logits.py)
        self._drafts = DraftMemo(self._encode, lambda token: self._decode([token]))
        self._bitmask = allocate_bitmask(config.max_batch, int(model_config.vocab_size))
        self.prefixes = (PrefixCache(store=prefix_store, prompt_tokens=config.prompt_cache_tokens)
                         if config.prefix_cache else None)
        self._pending: collections.deque[GenerationJob] = collections.deque()
        self._commands: list[_Command] = []
        self._wake = threading.Condition()
        self._closed = False
        self._rows: list[_Row] = []
        self._admitting: list[GenerationJob] = []  # taken from the queue, in no row yet: failed with the rows
        self._kv: KVBatch | None = None
        self._thread = threading.Thread(target=self._work, name="embedded-model", daemon=True)
        self._thread.start()

    # --- called from any thread -------------------------------------------------------
    @property
    def pad_id(self) -> int:
        return self._pad_id

    def submit(self, job: GenerationJob) -> concurrent.futures.Future[GenerationResult]:
        with self._wake:
            if self._closed:
                raise ModelError("the embedded model is closed")
            self._pending.append(job)
            self._wake.notify()
        return job.future

    def call(self, run: Callable[[], Any], blocked_by_adapter: str | None = None) -> concurrent.futures.Future[Any]:
        """Run `run` on the worker between decode steps (the model must not change mid-forward)."""
        command = _Command(run, concurrent.futures.Future(), blocked_by_adapter)
        with self._wake:
            if self._closed:
                raise ModelError("the embedded model is closed")
            self._commands.append(command)
            self._wake.notify()
        return command.future

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify()
        self._thread.join(timeout=30)

    # --- worker thread ----------------------------------------------------------------
    def _work(self) -> None:
        torch.set_num_threads(self._threads)
        while True:
            with self._wake:
                while not (self._closed or self._pending or self._commands or self._rows):
                    self._wake.wait()
                if self._closed:
                    break
            self._run_commands()
            try:
                with torch.inference_mode():
                    self._admit()
                    if self._rows:
                        self._decode_step()
            except Exception as exc:  # a failed step must fail its requests, not kill the worker
                log.exception("embedded engine step failed")
                self._fail_running(ModelError(f"embedded model failed: {type(exc).__name__}: {exc}".splitlines()[0]))
        self._fail_running(ModelError("the embedded model was closed"))
        self._fail_waiting(ModelError("the embedded model was closed"))

    def _run_commands(self) -> None:
        with self._wake:
            busy = {r.job.adapter for r in self._rows}
            ready = [c for c in self._commands if c.blocked_by_adapter is None or c.blocked_by_adapter not in busy]
            self._commands = [c for c in self._commands if c not in ready]
        if self.prefixes is not None and any(c.blocked_by_adapter is not None for c in ready):
            self.prefixes.clear()  # an adapter (re)loaded or unloaded: its prefixes' keys/values are stale
        for command in ready:
            if not command.future.set_running_or_notify_cancel():
                continue  # its caller gave up (Ctrl-C cancels the run's awaits): nothing to run or answer
            try:
                command.future.set_result(command.run())
            except Exception as exc:
                command.future.set_exception(exc)

    def _take_jobs(self) -> list[GenerationJob]:
        free = self._max_batch - len(self._rows)
        if free <= 0:
            return []
        if not self._rows:
            time.sleep(ADMIT_WINDOW_S)
        with self._wake:
            jobs: list[GenerationJob] = []
            while self._pending and len(jobs) < free:
                job = self._pending.popleft()
                if job.future.set_running_or_notify_cancel():
                    jobs.append(job)
        return jobs

    def _admit(self) -> None:
        jobs = self._take_jobs()
        if not jobs:
            return
        self._admitting = jobs
        admitted_at = time.perf_counter()
        rows = [_Row(job, RowSampler(job.sampling), admitted_at) for job in jobs]
        for row in rows:  # e.g. `{"answer":"` before the first choice: prefilled with the prompt
            self._jump(row)
        while rows:  # rows sharing a longer prefix with an earlier one wait for its prefill, then start from it
            jobs = [row.job for row in rows]
            waits = [False] * len(jobs) if self.prefixes is None else self.prefixes.wait_for_earlier(jobs)
            self._prefill([row for row, wait in zip(rows, waits, strict=True) if not wait], admitted_at)
            rows = [row for row, wait in zip(rows, waits, strict=True) if wait]
        self._admitting = []
        self._retire_finished()

    def _prefill(self, rows: list[_Row], admitted_at: float) -> None:
        # Rows whose cached prefix and remaining feed have the same lengths are prefilled together, others
        # apart: a left-padded group costs every row the longest feed (padding columns are computed too),
        # while a prefill of a few hundred tokens keeps the cores as busy alone as in a group.
        shapes: dict[tuple[int, int], list[tuple[_Row, LayerStates | None, list[int]]]] = {}
        for row in rows:
            prefix = None if self.prefixes is None else self.prefixes.start(  # keys/values to start from
                row.job.adapter, row.job.prompt_ids, row.job.prefix_len, self._prefill_alone)
            start = prefix[0][0].shape[2] if prefix else 0
            feed = row.job.prompt_ids[start:] + row.unfed()
            shapes.setdefault((start, len(feed)), []).append((row, prefix, feed))
        for members in shapes.values():
            group_rows = [row for row, _, _ in members]
            group = batch_from_prefixes(self.layers, [prefix for _, prefix, _ in members])
            step = self._feed(group, group_rows, [feed for _, _, feed in members])
            if self.prefixes is not None:
                self.prefixes.prompts.remember_batch(group, [row.job for row in group_rows])
            now = time.perf_counter()
            for row in group_rows:
                row.prefill_s, row.first_token_at = now - admitted_at, now
            self._choose_tokens(group_rows, step, group)
            if self._kv is None:
                self._kv = group
            else:
                self._kv.merge(group, reserve_rows=self._max_batch)
            self._rows.extend(group_rows)

    def _prefill_alone(self, ids: list[int], adapter: str | None) -> LayerStates:
        cache = new_cache(self.layers)
        self.forward(torch.tensor([ids], dtype=torch.long), torch.ones((1, len(ids)), dtype=torch.long),
                      torch.arange(len(ids)).unsqueeze(0), cache, 1, [adapter])
        return [(layer.keys.clone(), layer.values.clone()) for layer in cache.layers]

    def _feed(self, kv: KVBatch, rows: list[_Row], feeds: list[list[int]]) -> StepLogits:
        """One forward pass that appends `feeds[i]` to row i of `kv` (left-padded to the widest feed)."""
        width = max(map(len, feeds))
        input_ids = torch.full((len(feeds), width), self._pad_id, dtype=torch.long)
        for i, feed in enumerate(feeds):  # left-padded: every row's last real token is the last column
            input_ids[i, width - len(feed) :] = torch.tensor(feed, dtype=torch.long)
        mask, positions = kv.step_inputs([len(feed) for feed in feeds])
        keep = 1 + max(len(row.draft) for row in rows)  # the columns whose logits are read: drafts', the next token's
        few = few_columns([len(row.draft) if row.draft_forced else 0 for row in rows], keep) \
            if self.few_choice_logits else None
        return self.forward.step(input_ids, mask, positions, kv.cache, keep, [row.job.adapter for row in rows], few)

    def _decode_step(self) -> None:
        assert self._kv is not None
        step = self._feed(self._kv, self._rows, [row.unfed() for row in self._rows])
        self._choose_tokens(self._rows, step, self._kv)
        self._retire_finished()
        # Ragged steps leave masked holes in the shorter rows; once they add up to a good share of the
        # cache, one copy that squeezes them out is cheaper than attending over them every step.
        if self._kv is not None and self._kv.holes > max(32, self._kv.length // 4):
            self._kv.compact()

    def _choose_tokens(self, rows: list[_Row], step: StepLogits, kv: KVBatch) -> None:
        """Draw each row's next token from its last column; a row with a draft first checks it, column by
        column (its draft is the last columns of its feed), and drops the rejected rest from `kv`."""
        keep = step.logits.shape[1]
        for i, row in enumerate(rows):
            row.passes += 1
            draft, row.draft, row.draft_forced = row.draft, [], False
            for k in range(len(draft) + 1):
                token = self._pick(i, row, step, keep - 1 - len(draft) + k)
                if row.finish_reason is not None:
                    break
                if k < len(draft) and token != draft[k]:
                    kv.reject(i, len(draft) - k)  # cache columns of draft[k:] are not this row's text
                    break
            row.fed = len(row.token_ids) - 1  # the token just drawn goes into the next pass
            if row.finish_reason is None:
                self._jump(row)

    def _pick(self, i: int, row: _Row, step: StepLogits, column: int) -> int:
        """Mask, steer and sample one column of row i, append the token and check whether the row ended."""
        grammar = row.job.grammar
        logits = step.column(i, column) if grammar is None else masked_column(step, i, column, grammar, self._bitmask)
        if grammar is not None:
            tokens_left = row.job.sampling.max_tokens - len(row.token_ids)
            if grammar.steer_to_close(logits, tokens_left, lambda: self._decode(row.token_ids)):
                row.narrowed_positions.append(len(row.token_ids))
        token, logprob = row.sampler.sample(logits)
        row.token_ids.append(token)
        row.logprobs.append(logprob)
        self._check_finished(row, token)
        return token

    def _jump(self, row: _Row) -> None:
        """Give the row the tokens its grammar forces next: appended ("forced") or drafted ("verified"); in
        "verified" mode, free text is drafted from where the context repeats (`DraftMemo.continuation`).
        Never past max_tokens or the context, and room is left for one drawn token after them."""
        grammar = row.job.grammar
        if grammar is None or self._jump_forward == "off":
            return
        used = len(row.token_ids)
        room = min(row.job.sampling.max_tokens - used, self._max_context - len(row.job.prompt_ids) - used) - 1
        if row.learning is not None and self._drafts.learn(row.learning[0], row.token_ids[row.learning[1] :]):
            row.learning = None
        if room <= 0:
            return
        forced = grammar.forced_string()
        if self._jump_forward == "verified":
            context = row.job.prompt_ids + row.token_ids
            if forced and row.learning is None:
                row.learning = (forced, used)
            row.draft = (self._drafts.draft(forced, context) if forced else self._drafts.continuation(context))[:room]
            row.draft_forced = bool(forced)
            return
        if not forced:
            return
        ids = accept_forced(grammar, self._encode(forced), room)
        for token in ids:
            row.forced_positions.append(len(row.token_ids))
            row.token_ids.append(token)
            row.logprobs.append(0.0)  # no choice was made: the grammar allowed nothing else
        if ids:
            self._check_limits(row)  # a stop string may sit in the forced text

    def _encode(self, text: str) -> list[int]:
        with self._tokenizer_lock:
            return list(self._tokenizer.encode(text, add_special_tokens=False))

    def _check_finished(self, row: _Row, token: int) -> None:
        grammar = row.job.grammar
        if grammar is not None and not grammar.accept(token):
            row.finish_reason = "error"  # cannot happen with a masked sample; kept as a guard
            return
        if token in self._eos_ids or (grammar is not None and grammar.terminated):
            row.finish_reason = "stop"
            return
        self._check_limits(row)

    def _check_limits(self, row: _Row) -> None:
        stops = row.job.sampling.stop
        if stops:
            text = self._decode(row.token_ids)
            cut = min((i for i in (text.find(s) for s in stops) if i >= 0), default=-1)
            if cut >= 0:
                row.text, row.finish_reason = text[:cut], "stop"
                return
        used = len(row.job.prompt_ids) + len(row.token_ids)
        if len(row.token_ids) >= row.job.sampling.max_tokens or used >= self._max_context:
            row.finish_reason = "length"

    def _retire_finished(self) -> None:
        keep: list[int] = []
        for i, row in enumerate(self._rows):
            if row.finish_reason is not None:
                self._resolve(row)
            elif row.job.cancelled or row.job.future.cancelled():
                continue
            else:
                keep.append(i)
        if len(keep) == len(self._rows):
            return
        if not keep:
            self._rows, self._kv = [], None
            return
        assert self._kv is not None
        self._rows = [self._rows[i] for i in self._kv.keep(keep)]

    def _resolve(self, row: _Row) -> None:
        now = time.perf_counter()
        text = row.text if row.text is not None else self._decode(row.token_ids)
        timings = Timings(queued_s=row.admitted_at - row.job.submitted_at, prefill_s=row.prefill_s,
                          decode_s=now - row.first_token_at, total_s=now - row.job.submitted_at,
                          forward_passes=row.passes)
        result = GenerationResult(row.token_ids, row.logprobs, text, row.finish_reason or "stop", timings,
                                  row.forced_positions, row.narrowed_positions)
        with contextlib.suppress(concurrent.futures.InvalidStateError):  # the caller gave up
            row.job.future.set_result(result)

    def _decode(self, token_ids: list[int]) -> str:
        with self._tokenizer_lock:
            return self._tokenizer.decode(token_ids, skip_special_tokens=True)

    def _fail_running(self, error: Exception) -> None:
        for job in [row.job for row in self._rows] + self._admitting:
            with contextlib.suppress(concurrent.futures.InvalidStateError):
                job.future.set_exception(error)
        self._rows, self._admitting, self._kv = [], [], None

    def _fail_waiting(self, error: Exception) -> None:
        with self._wake:
            pending, self._pending = list(self._pending), collections.deque()
            commands, self._commands = self._commands, []
        futures = [job.future for job in pending] + [command.future for command in commands]
        for future in futures:
            with contextlib.suppress(concurrent.futures.InvalidStateError):
                future.set_exception(error)
