"""How the embedded engine runs: one frozen value, built by the caller (the model factory from the settings, a
benchmark, a test) and read by every part, instead of a dozen keywords handed down from one call to the next.

    model = EmbeddedChatModel.load(model_dir, EngineConfig(max_batch=4, jump_forward="off"))

The choices among ways of computing (the forward pass, jump-forward, bf16 products) are named here too, so the
parts that implement them and the callers that pick them share one definition. Nothing heavy is imported.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from deepresearch.agent.config import EMBEDDED_MODEL_NAME, PROMPT_CACHE_TOKENS

ForwardKind = Literal["lean", "transformers"]
DEFAULT_FORWARD: ForwardKind = "lean"
JumpForward = Literal["off", "forced", "verified"]
DEFAULT_JUMP_FORWARD: JumpForward = "verified"  # the same output as "off", in fewer passes
Bf16Products = Literal["auto", "on", "off"]


def default_threads() -> int:
    """The cores this process may run on."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


@dataclass(frozen=True)
class EngineConfig:
    """What the caller chooses about the embedded engine. `EmbeddedChatModel.load` decides what is left open
    (`threads` None, `bf16_products` "auto") and hands the decided value on: past `load`, "auto" counts as "off"."""

    model_name: str = EMBEDDED_MODEL_NAME  # the name completions report
    max_batch: int = 8  # rows decoded together
    threads: int | None = None  # torch threads of the engine (None: `default_threads()`)
    # "lean": the Llama forward with OpenBLAS products (layers/forward.py); "transformers": the library's own.
    forward: ForwardKind = DEFAULT_FORWARD
    # How text a JSON grammar forces skips forward passes: "verified", "forced" or "off" (decoding/jump_forward.py).
    jump_forward: JumpForward = DEFAULT_JUMP_FORWARD
    # Reuse the keys/values of each role's system message and of recent prompts (engine/prefix_cache.py) ...
    prefix_cache: bool = True
    prompt_cache_tokens: int = PROMPT_CACHE_TOKENS  # ... of the latter this many tokens at most (0: none)
    # An identical greedy request waits for or takes the result of an earlier one (engine/greedy_reuse.py).
    reuse_greedy: bool = False
    # The lean forward's products of a few rows read the packaged GGUF's blocks (kernels/gguf_blocks.py).
    gguf_products: bool = True
    # Its products of many rows in bf16 ("on"), fp32 ("off"), or bf16 where a probe of this CPU finds it faster
    # ("auto", layers/bf16.py; the verdict kept in `store_dir`).
    bf16_products: Bf16Products = "off"
    # Where what this process computes once is kept for the next: the base model's prefixes
    # (engine/prefix_cache.py), compiled grammars (decoding/grammar_store.py) and the bf16 probe's verdict.
    store_dir: Path | None = None

    @property
    def thread_count(self) -> int:
        return self.threads or default_threads()

    @property
    def bf16_threads(self) -> int:
        """Threads of the lean forward's bf16 products, 0 for fp32 (the transformers forward has none)."""
        return self.thread_count if self.bf16_products == "on" and self.forward == "lean" else 0
