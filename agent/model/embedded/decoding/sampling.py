"""Choosing the next token of each row from its (grammar-masked) logits.

Logprobs are those of the distribution the token was actually drawn from: log-softmax of the logits
after the grammar mask, divided by the temperature, restricted to the top-p nucleus and renormalised.
Greedy rows (temperature 0) report log-softmax of the masked logits (temperature 1). This is vLLM's
`--logprobs-mode processed_logprobs`, which `serve-model` passes, so both backends log the same thing.
"""

from __future__ import annotations

import torch

from ...types import Sampling


class RowSampler:
    """Per-request sampling state: parameters and, when sampling, its own seeded generator."""

    def __init__(self, sampling: Sampling) -> None:
        self.temperature = sampling.temperature
        self.top_p = sampling.top_p
        self.generator: torch.Generator | None = None
        if self.temperature > 0.0:
            self.generator = torch.Generator()
            if sampling.seed is not None:
                self.generator.manual_seed(sampling.seed)
            else:
                self.generator.seed()

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    def sample(self, logits: torch.Tensor) -> tuple[int, float]:
        """Pick a token from one row of fp32 logits (already masked); return (token id, logprob)."""
        if self.greedy:
            token = int(torch.argmax(logits))
            return token, float(torch.log_softmax(logits, dim=-1)[token])
        logprobs = torch.log_softmax(logits / self.temperature, dim=-1)
        if self.top_p < 1.0:
            logprobs = _restrict_to_nucleus(logprobs, self.top_p)
        token = int(torch.multinomial(logprobs.exp(), 1, generator=self.generator))
        return token, float(logprobs[token])


def _restrict_to_nucleus(logprobs: torch.Tensor, top_p: float) -> torch.Tensor:
    """Keep the smallest set of most likely tokens whose mass reaches top_p; renormalise."""
    sorted_lp, order = torch.sort(logprobs, descending=True)
    mass_before = torch.cumsum(sorted_lp.exp(), dim=-1) - sorted_lp.exp()
    drop_sorted = mass_before >= top_p  # the first token is always kept (mass_before == 0)
    drop = torch.zeros_like(drop_sorted).scatter(0, order, drop_sorted)
    kept = logprobs.masked_fill(drop, float("-inf"))
    return torch.log_softmax(kept, dim=-1)
