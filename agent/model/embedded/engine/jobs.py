"""What goes into the embedded engine and what comes out: a generation job and its result."""

from __future__ import annotations

import concurrent.futures
import time
from dataclasses import dataclass, field

from ...types import Sampling, Timings
from ..decoding.grammar import RowGrammar


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
