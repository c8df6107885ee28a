"""JSON-schema-constrained decoding for the embedded engine with xgrammar (the engine vLLM uses).

Schemas compile once and are cached by their canonical JSON text; each constrained row gets its own
matcher, and the engine masks that row's logits before sampling, so constrained and free rows share
one batch. Whitespace between JSON tokens is not free (`any_whitespace=False`): a 135M model given
free whitespace can emit newlines until it runs out of tokens. The vLLM client asks for the same.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import torch
import xgrammar as xgr

from .base import ModelError


def schema_key(schema: dict[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"))


class GrammarCache:
    """Compiles JSON schemas against one tokenizer and keeps the results."""

    def __init__(self, tokenizer: Any, vocab_size: int) -> None:
        self.vocab_size = vocab_size
        self._info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size)
        self._compiler = xgr.GrammarCompiler(self._info, max_threads=1)
        self._compiled: dict[str, xgr.CompiledGrammar] = {}
        self._lock = threading.Lock()

    def compile(self, schema: dict[str, Any]) -> xgr.CompiledGrammar:
        key = schema_key(schema)
        with self._lock:
            hit = self._compiled.get(key)
        if hit is not None:
            return hit
        try:
            compiled = self._compiler.compile_json_schema(key, any_whitespace=False, strict_mode=True)
        except Exception as exc:  # xgrammar raises RuntimeError/ValueError with a long message
            first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ModelError(f"cannot compile the JSON schema for constrained decoding: {first_line}") from exc
        with self._lock:
            self._compiled[key] = compiled
        return compiled

    def matcher(self, compiled: xgr.CompiledGrammar) -> RowGrammar:
        return RowGrammar(xgr.GrammarMatcher(compiled))


class RowGrammar:
    """One request's position in its grammar."""

    def __init__(self, matcher: xgr.GrammarMatcher) -> None:
        self._matcher = matcher

    def fill_mask(self, bitmask: torch.Tensor, row: int) -> None:
        self._matcher.fill_next_token_bitmask(bitmask, row)

    def accept(self, token_id: int) -> bool:
        return self._matcher.accept_token(token_id)

    @property
    def terminated(self) -> bool:
        return self._matcher.is_terminated()


def mask_logits(logits: torch.Tensor, grammars: list[RowGrammar | None], bitmask: torch.Tensor) -> None:
    """Mask, in place, the rows of `logits` ([rows, vocab]) that have a grammar."""
    rows = [i for i, grammar in enumerate(grammars) if grammar is not None]
    if not rows:
        return
    for i in rows:
        grammars[i].fill_mask(bitmask, i)  # type: ignore[union-attr]
    xgr.apply_token_bitmask_inplace(logits, bitmask[: logits.shape[0]], indices=rows)


def allocate_bitmask(rows: int, vocab_size: int) -> torch.Tensor:
    return xgr.allocate_token_bitmask(rows, vocab_size)
