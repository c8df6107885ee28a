"""What goes into the embedded engine and what comes out: a generation job, its result, the engine's limits."""

from __future__ import annotations

import concurrent.futures
import time
from dataclasses import dataclass, field

from ..config import PROMPT_CACHE_TOKENS
from .embedded_forward import DEFAULT_FORWARD, ForwardKind
from .embedded_grammar import RowGrammar
from .embedded_jump import DEFAULT_JUMP_FORWARD, JumpForward
from .types import Sampling, Timings


@dataclass
class GenerationJob:
    prompt_ids: list[int]
    sampling: Sampling
    grammar: RowGrammar | None = None
    adapter: str | None = None
    prefix_len: int = 0  # leading prompt tokens shared with other calls (the system message): cacheable
    future: concurrent.futures.Future[GenerationResult] = field(default_factory=concurrent.futures.Future)
    submitted_at: float = field(default_factory=time.perf_counter)
    cancelled: bool = False  # set by the caller that stopped waiting; the row is dropped at the next step


@dataclass
class GenerationResult:
    token_ids: list[int]
    logprobs: list[float]
    text: str
    finish_reason: str
    timings: Timings
    forced_positions: list[int] = field(default_factory=list)
    narrowed_positions: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class EngineLimits:
    max_batch: int  # rows decoded together
    max_context: int  # prompt + completion tokens of one row
    threads: int  # torch threads of the engine's thread
    jump_forward: JumpForward = DEFAULT_JUMP_FORWARD  # how grammar-forced text skips forward passes (embedded_jump.py)
    prefix_cache: bool = True  # reuse the keys/values of shared prompt prefixes (embedded_prefix.py)
    prompt_cache_tokens: int = PROMPT_CACHE_TOKENS  # of them, whole prompts kept (0: the system messages only)
    forward: ForwardKind = DEFAULT_FORWARD  # "lean": OpenBLAS products (embedded_forward.py); else transformers'
    bf16_threads: int = 0  # > 0: the lean forward's long products in bf16 on that many threads (embedded_bf16.py)
