"""JSON-schema-constrained decoding for the embedded engine with xgrammar (the engine vLLM uses).

Schemas compile once and are cached by their JSON text (property order kept: it is the order the
grammar emits them in); each constrained row gets its own matcher, and the engine masks that row's
logits before sampling, so constrained and free rows share one batch. Whitespace between JSON tokens
is not free (`any_whitespace=False`, compact separators): a 135M model given free whitespace can emit
newlines until it runs out of tokens. `serve-model` starts vLLM with `disable_any_whitespace`, which
compiles the very same grammar, so both backends produce the same JSON.

Closing: a small model can loop inside a string ("Python, Python, …") until max_tokens cuts the JSON.
When a constrained row is within its closing reserve of max_tokens, its allowed tokens are narrowed
to those that close the current string (`"`), else an object/array (`}`, `]`), else to `,`, so the
object finishes and parses. Only
that tail differs from plain grammar sampling (vLLM has no such step); its logprobs are those of the
narrowed distribution, which is what the tokens were drawn from.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch
import xgrammar as xgr

from ...base import ModelError

if TYPE_CHECKING:
    from .grammar_store import GrammarStore

# vLLM's xgrammar backend with disable_any_whitespace compiles with exactly these, so both backends
# constrain to the same compact JSON.
JSON_SEPARATORS = (",", ":")


def schema_key(schema: dict[str, Any]) -> str:
    return json.dumps(schema, separators=(",", ":"))


def closing_reserve(schema: dict[str, Any], max_tokens: int) -> int:
    """Tokens kept back to close the JSON: a few per object and property the schema describes."""
    objects = [node for node in _walk(schema) if isinstance(node.get("properties"), dict)]
    properties = sum(len(node["properties"]) for node in objects)
    return min(max_tokens // 2, 8 + 6 * (len(objects) + properties))


def _walk(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        return [node] + [n for v in node.values() for n in _walk(v)]
    if isinstance(node, list):
        return [n for v in node for n in _walk(v)]
    return []


class GrammarCache:
    """Compiles JSON schemas against one tokenizer and keeps the results (also on disk with a `store`)."""

    def __init__(self, tokenizer: Any, vocab_size: int, store: GrammarStore | None = None) -> None:
        self.vocab_size = vocab_size
        self._store = store

        def build_info() -> xgr.TokenizerInfo:
            return xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size)

        self._info = store.tokenizer_info(build_info) if store else build_info()
        self._compiler = xgr.GrammarCompiler(self._info, max_threads=1)
        self._compiled: dict[str, xgr.CompiledGrammar] = {}
        self._lock = threading.Lock()
        self.closing = ClosingTiers(tokenizer, vocab_size)

    def cached(self, schema: dict[str, Any]) -> xgr.CompiledGrammar | None:
        with self._lock:
            return self._compiled.get(schema_key(schema))

    def compile(self, schema: dict[str, Any]) -> xgr.CompiledGrammar:
        key = schema_key(schema)
        hit = self.cached(schema)
        if hit is not None:
            return hit
        compiled = self._store.load(key, self._info) if self._store else None
        if compiled is None:
            started = time.perf_counter()
            try:
                compiled = self._compiler.compile_json_schema(
                    key, any_whitespace=False, separators=JSON_SEPARATORS, strict_mode=True
                )
            except Exception as exc:  # xgrammar raises RuntimeError/ValueError with a long message
                first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise ModelError(f"cannot compile the JSON schema for constrained decoding: {first_line}") from exc
            if self._store:
                self._store.save(key, compiled, time.perf_counter() - started)
        with self._lock:
            self._compiled[key] = compiled
        return compiled

    def matcher(self, compiled: xgr.CompiledGrammar, reserve: int = 0) -> RowGrammar:
        return RowGrammar(xgr.GrammarMatcher(compiled), self.closing, reserve)


class ClosingTiers:
    """Vocabulary entries that end a JSON string, end an object/array, or separate items."""

    def __init__(self, tokenizer: Any, vocab_size: int) -> None:
        self.string_closers = torch.zeros(vocab_size, dtype=torch.bool)
        self.structure_closers = torch.zeros(vocab_size, dtype=torch.bool)
        self.separators = torch.zeros(vocab_size, dtype=torch.bool)
        # Byte-level BPE keeps printable ASCII as itself, so the raw token strings can be searched.
        for token_id, piece in enumerate(tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))):
            if token_id >= vocab_size or piece is None:
                continue
            if '"' in piece:
                self.string_closers[token_id] = "\\" not in piece  # an escaped quote stays in the string
                continue
            # `},` or `[` would open the next item: only pure closers (empty `[]`/`{}` are fine) count.
            rest = piece.replace("[]", "").replace("{}", "")
            if any(ch in rest for ch in "[{"):
                continue
            if "," in rest:
                self.separators[token_id] = not any(ch in rest for ch in "}]")
            elif "}" in rest or "]" in rest or rest != piece:
                self.structure_closers[token_id] = True

    def narrow(self, logits: torch.Tensor, in_string: bool) -> None:
        """Keep, in place, only the allowed tokens of the first tier that has any, in one masked row."""
        allowed = logits > float("-inf")
        tiers = (self.string_closers,) if in_string else (self.structure_closers, self.separators)
        for tier in tiers:
            chosen = allowed & tier
            if bool(chosen.any()):
                logits.masked_fill_(~chosen, float("-inf"))
                return


def inside_json_string(text: str) -> bool:
    """Whether JSON text stops inside a string literal (an odd number of unescaped quotes)."""
    inside = escaped = False
    for ch in text:
        if escaped:
            escaped = False
        elif ch == "\\" and inside:
            escaped = True
        elif ch == '"':
            inside = not inside
    return inside


class RowGrammar:
    """One request's position in its grammar, and how many final tokens are kept for closing it."""

    def __init__(self, matcher: xgr.GrammarMatcher, closing: ClosingTiers, reserve: int) -> None:
        self._matcher = matcher
        self._closing = closing
        self.reserve = reserve

    def steer_to_close(self, logits: torch.Tensor, tokens_left: int, text_so_far: Callable[[], str]) -> bool:
        """Within the closing reserve: narrow the masked logits to the closing tier (True when it did)."""
        if tokens_left > self.reserve:
            return False
        self._closing.narrow(logits, inside_json_string(text_so_far()))
        return True

    def fill_mask(self, bitmask: torch.Tensor, row: int) -> None:
        self._matcher.fill_next_token_bitmask(bitmask, row)

    def accept(self, token_id: int) -> bool:
        return self._matcher.accept_token(token_id)

    def forced_string(self) -> str:
        """The longest text every continuation from here starts with ("" when the model has a choice):
        a key, punctuation, the rest of an enum value. Does not change the matcher's state."""
        try:
            return self._matcher.find_jump_forward_string()
        except UnicodeDecodeError:
            # The row stopped inside a multi-byte character (the model drew the first byte of "°" as its own
            # token): xgrammar cannot return the rest as text, so this step makes no jump.
            return ""

    @property
    def terminated(self) -> bool:
        return self._matcher.is_terminated()


def mask_row(logits: torch.Tensor, grammar: RowGrammar, bitmask: torch.Tensor, row: int) -> None:
    """Mask, in place, one row of logits ([vocab]) with `grammar`, using row `row` of the bitmask."""
    grammar.fill_mask(bitmask, row)
    apply_mask(logits, bitmask, row)


def apply_mask(logits: torch.Tensor, bitmask: torch.Tensor, row: int) -> None:
    """Mask, in place, one row of logits ([vocab]) with row `row` of a filled bitmask."""
    xgr.apply_token_bitmask_inplace(logits.unsqueeze(0), bitmask[row : row + 1])


_BITS = torch.arange(32, dtype=torch.int32)


def allowed_tokens(bitmask_row: torch.Tensor, vocab: int) -> torch.Tensor:
    """The token ids a filled bitmask row ([words] int32, bit j of word w = token 32·w + j) allows, below `vocab`."""
    words = bitmask_row.nonzero().squeeze(1)  # a few words when a few tokens are allowed
    bits = (bitmask_row.index_select(0, words).unsqueeze(1) >> _BITS).bitwise_and_(1).bool()
    tokens = (words.unsqueeze(1) * 32 + _BITS)[bits]  # ascending: words and bits in order
    return tokens[tokens < vocab]


def allocate_bitmask(rows: int, vocab_size: int) -> torch.Tensor:
    return xgr.allocate_token_bitmask(rows, vocab_size)
