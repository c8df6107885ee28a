"""Jump-forward for JSON-constrained rows: what the grammar forces, as tokens, and the two ways to use it.

Where a row's grammar allows exactly one continuation string (a key, punctuation, the rest of an enum
value), xgrammar's matcher reports it (`find_jump_forward_string`); it is tokenised once, canonically.

- "forced": those tokens are appended without asking the model (logprob 0.0, listed in
  `forced_positions`, accepted in the matcher up to the first it rejects) and fed in the next forward
  pass all at once. The model then continues from the canonical tokenisation of the forced text, which
  is often not the tokenisation it picks itself under the mask (`{"` where it writes `{`, `"`), so the
  output can differ from plain constrained decoding. The last token is left to the model, because it
  may merge with what follows (a forced "The " tokenises as "The", " " where the model writes
  "The", " Amazon").
- "verified": the tokens are a draft fed in the next pass; the logits of that same pass check them one
  by one, as speculative decoding does: each position's token is drawn exactly as plain decoding draws it
  (mask, closing steer, sampler with its own generator) and the draft is kept while the two agree. The
  output, logprobs and random draws are those of plain decoding; only the number of passes drops. The
  rejected rest of a draft is masked out of the cache.
- "off": one forward pass per token.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from .embedded_grammar import RowGrammar

JumpForward = Literal["off", "forced", "verified"]
JUMP_FORWARD_MODES: tuple[str, ...] = ("off", "forced", "verified")
DEFAULT_JUMP_FORWARD: JumpForward = "verified"  # the same output as "off", in fewer passes


def forced_tokens(grammar: RowGrammar, encode: Callable[[str], list[int]], room: int, mode: JumpForward) -> list[int]:
    """The forced continuation's canonical tokens, at most `room` of them.

    "forced": accepted into the matcher here (the caller appends them); "verified": only drafted, the
    matcher advances when the model's own draws confirm them."""
    if mode == "off" or room <= 0:
        return []
    text = grammar.forced_string()
    if not text:
        return []
    ids = encode(text)
    if mode == "verified":
        return ids[:room]
    accepted: list[int] = []
    for token in ids[: min(room, len(ids) - 1)]:
        if not grammar.accept(token):
            break
        accepted.append(token)
    return accepted
