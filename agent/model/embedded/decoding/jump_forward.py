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
  rejected rest of a draft is masked out of the cache. Drafts reuse the model's own tokenisation of a
  forced string once it has written it, or the prompt's where the string copies the prompt (DraftMemo),
  since it rarely picks the canonical one for keys and copies a quoted sentence as the prompt spells it.
  Each drafted column costs compute and logits even when rejected: on this CPU a 5-token step takes
  ~1.5× a 1-token step, so the saving is smaller than the drop in passes.
- "off": one forward pass per token.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from .grammar import RowGrammar

LOOKUP_MATCH = 3  # tokens a free-text draft's context must repeat (`DraftMemo.continuation`)
LOOKUP_DRAFT = 8  # tokens drafted from there at most


def accept_forced(grammar: RowGrammar, ids: list[int], room: int) -> list[int]:
    """"forced" mode: the canonical tokens the matcher accepts, up to the first it rejects, at most `room`,
    and never the last one (it may merge with what follows)."""
    accepted: list[int] = []
    for token in ids[: min(room, len(ids) - 1)]:
        if not grammar.accept(token):
            break
        accepted.append(token)
    return accepted


class DraftMemo:
    """"verified" mode's drafts: how the model itself tokenised a forced string when it last wrote it, else
    the canonical tokens. The model writes `{`, `"` where the tokenizer says `{"`, so a canonical draft of
    a key is often rejected after its first token; its own earlier tokenisation is usually kept whole.

    A forced string often runs from JSON punctuation into a value's text (`,"quote":"Night Crawler is a
    1990 film."}`: the key, then the only enum value left). Such a whole string is new every time, so its
    draft starts with the longest learnt prefix that ends at a quote (`,"quote":"`, learnt from any row
    that wrote it): a draft rejected at its first quote would waste every column after it.
    Shared by all rows (keys and enum values repeat across calls); cleared when it reaches `limit`."""

    def __init__(self, encode: Callable[[str], list[int]], token_text: Callable[[int], str], limit: int = 4096):
        self._encode = encode
        self._token_text = token_text
        self._texts: dict[int, str] = {}
        self._memo: dict[str, list[int]] = {}
        self._limit = limit

    def draft(self, forced: str, context: list[int] | None = None) -> list[int]:
        """Tokens for `forced`. With `context` (the row's prompt and output ids), a forced string the prompt
        spells right after the row's last token is drafted as the prompt tokenises it, and only as far
        as the prompt spells it: an extractor's quote is a source sentence copied from the prompt, and
        where the prompt has "Railway\\nThe" and the enum "Railway The", the model writes " ", "The"."""
        copied = self._from_context(forced, context) if context else []
        if copied:
            return copied
        whole = self._memo.get(forced)
        if whole:
            return whole
        for end in range(len(forced) - 1, 0, -1):  # the longest learnt prefix that ends at a quote
            if forced[end - 1] == '"' and (learnt := self._memo.get(forced[:end])):
                return learnt + self._encode(forced[end:])
        return self._encode(forced)

    def _from_context(self, forced: str, context: list[int]) -> list[int]:
        last = context[-1]
        for start in range(len(context) - 2, 0, -1):  # after each earlier occurrence of the last token, latest first
            if context[start - 1] != last:
                continue
            candidate = context[start : start + len(forced)]
            spelled = sum(1 for _ in self._prefixes(forced, candidate))
            if spelled >= 2:
                return candidate[:spelled]
        return []

    def continuation(self, context: list[int]) -> list[int]:
        """Free text (nothing forced): what followed the latest earlier occurrence of the row's last
        LOOKUP_MATCH tokens in its prompt and output, up to LOOKUP_DRAFT tokens ("prompt lookup" drafting).
        A planner's query copies names from the question, a writer's answer a candidate."""
        if len(context) <= LOOKUP_MATCH:
            return []
        tail = context[-LOOKUP_MATCH:]
        first = tail[0]
        for start in range(len(context) - LOOKUP_MATCH - 1, -1, -1):
            if context[start] == first and context[start : start + LOOKUP_MATCH] == tail:
                return context[start + LOOKUP_MATCH : start + LOOKUP_MATCH + LOOKUP_DRAFT]
        return []

    def learn(self, forced: str, written: list[int]) -> bool:
        """`written`: the row's tokens since `forced` became due. Remember how they spell `forced` and each
        of its prefixes that ends at a quote; True when there is nothing more to learn from this row."""
        spelled = 0
        for spelled, text in enumerate(self._prefixes(forced, written), start=1):
            if text == forced or text.endswith('"'):
                self._remember(text, written[:spelled])
            if text == forced:
                return True
        return spelled < len(written)  # a token ran past the forced text into the row's own choice

    def _prefixes(self, forced: str, tokens: list[int]) -> Iterator[str]:
        """The text of each run tokens[:n] that spells a prefix of `forced`, shortest first, up to all of it."""
        text = ""
        for token in tokens:
            if token not in self._texts:
                self._texts[token] = self._token_text(token)
            text += self._texts[token]
            if not forced.startswith(text):
                return
            yield text
            if len(text) == len(forced):
                return

    def _remember(self, text: str, tokens: list[int]) -> None:
        if len(self._memo) >= self._limit:
            self._memo.clear()
        self._memo[text] = tokens
