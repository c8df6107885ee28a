"""The grammar's mask at every completion token, replayed from the trace, so that the trainer's log π is
over the tokens the sampler could draw: the same (masked) distribution as the logged log μ.

The engine draws a constrained token from softmax(masked logits / T). A plain log-softmax over the whole
vocabulary puts mass on tokens the grammar forbade, so log π_old < log μ wherever the grammar narrowed the
choice (≈ 0.4 nats on average on SmolLM2 rollouts), and the importance weight π_old / μ down-weighted
exactly the constrained positions. Replaying the logged schema with the engine's own compiler (xgrammar,
same settings as vLLM's) gives the allowed set at each position; near max_tokens the embedded engine's
closing tiers narrowed it further, and the trace says where. A token the grammar forces is then the only
one allowed: log π = 0 whatever the weights, so it carries no gradient by construction.

Masks are packed as xgrammar packs them: int32 words, token t is bit t % 32 of word t // 32.
"""

from __future__ import annotations

from typing import Any

import torch

from .samples import TrainingSample

ALL_ALLOWED = -1  # an int32 word with every bit set


def words_for(vocab_size: int) -> int:
    return (vocab_size + 31) // 32


def unpack_bits(packed: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """[..., W] int32 words → [..., vocab_size] bool."""
    shifts = torch.arange(32, dtype=torch.int32, device=packed.device)
    bits = (packed.unsqueeze(-1) >> shifts) & 1
    return bits.reshape(*packed.shape[:-1], -1)[..., :vocab_size].bool()


def pack_bits(allowed: torch.Tensor) -> torch.Tensor:
    """[..., V] bool → [..., ceil(V / 32)] int32 words (the inverse of unpack_bits)."""
    v = allowed.shape[-1]
    padded = torch.nn.functional.pad(allowed.long(), (0, words_for(v) * 32 - v))
    words = (padded.reshape(*allowed.shape[:-1], -1, 32) << torch.arange(32, device=allowed.device)).sum(-1)
    return torch.where(words >= 2**31, words - 2**32, words).to(torch.int32)  # two's complement


class GrammarMasks:
    """Replays a sample's schema over its completion tokens with the engine's grammar code."""

    def __init__(self, tokenizer: Any, vocab_size: int) -> None:
        from deepresearch.agent.model.embedded.decoding.grammar import GrammarCache

        self.tokenizer = tokenizer
        self.vocab_size = vocab_size
        self.grammars = GrammarCache(tokenizer, vocab_size)
        self.mismatches = 0  # samples whose tokens left the grammar (another tokenizer or engine)

    @classmethod
    def for_model(cls, model_path: Any, vocab_size: int) -> GrammarMasks:
        from transformers import AutoTokenizer

        return cls(AutoTokenizer.from_pretrained(str(model_path)), vocab_size)

    def packed(self, sample: TrainingSample) -> torch.Tensor | None:
        """[len(completion), W] allowed-token words per completion position; None for an unconstrained call.
        From a token the grammar would not have allowed on (a trace it does not describe), every token is
        allowed: the plain log-softmax, as without a schema."""
        if sample.json_schema is None:
            return None
        import xgrammar as xgr
        from deepresearch.agent.model.embedded.decoding.grammar import inside_json_string

        matcher = xgr.GrammarMatcher(self.grammars.compile(sample.json_schema))
        n = len(sample.completion_ids)
        out = torch.full((n, words_for(self.vocab_size)), ALL_ALLOWED, dtype=torch.int32)
        narrowed = set(sample.narrowed_positions)
        for i, token in enumerate(sample.completion_ids):
            if matcher.is_terminated():  # e.g. the stop token after the closing brace: nothing to choose
                break
            matcher.fill_next_token_bitmask(out, i)
            if i in narrowed:
                text = self.tokenizer.decode(sample.completion_ids[:i], skip_special_tokens=True)
                row = torch.zeros(self.vocab_size).masked_fill(~unpack_bits(out[i], self.vocab_size), float("-inf"))
                self.grammars.closing.narrow(row, inside_json_string(text))
                out[i] = pack_bits(row > float("-inf"))
            allowed = token < self.vocab_size and bool(unpack_bits(out[i], self.vocab_size)[token])
            if not allowed or not matcher.accept_token(token):
                out[i:] = ALL_ALLOWED
                self.mismatches += 1
                break
        return out
