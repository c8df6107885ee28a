"""One layer's attention of a prefill in bf16: the softmax between the two bf16 products in fp32 tensors (as
session 49 shipped it) or read and written as bf16 (computed in fp32 inside), on this CPU, and how far each is
from SDPA's fp32 output.

    .venv/bin/python docs/results/bench-cheaper-steps/softmax.py
"""

from __future__ import annotations

import torch
from deepresearch.agent.model.embedded_bf16 import Bf16Attention, seconds_per_call, torch_threads
from deepresearch.agent.model.embedded_split_attention import sdpa

BF16 = torch.bfloat16


def fp32_softmax(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """Session 49's Bf16Attention: bf16 scores turned to fp32, scaled, masked, softmaxed, turned back."""
    with torch_threads(2):
        scores = torch.matmul(q.to(BF16), keys.to(BF16).transpose(-1, -2)).float()
        scores.mul_(q.shape[-1] ** -0.5)
        scores += bias
        return torch.matmul(torch.softmax(scores, dim=-1).to(BF16), values.to(BF16)).float()


def main() -> None:
    torch.manual_seed(0)
    print(f"{'fed':>5}{'cached':>8}{'fp32 softmax ms':>17}{'bf16 softmax ms':>17}{'same output':>13}"
          f"{'max |Δ| to SDPA':>17}")
    for fed, cached in ((100, 200), (268, 432), (500, 700)):
        length = fed + cached
        q, keys, values = torch.randn(1, 3, 3 * fed, 64), torch.randn(1, 3, length, 64), torch.randn(1, 3, length, 64)
        visible = torch.ones(fed, length, dtype=torch.bool).tril(cached)
        bias = torch.zeros(1, 1, fed, length).masked_fill_(~visible, float("-inf")).repeat(1, 1, 3, 1)
        shipped = Bf16Attention(sdpa, threads=2, min_queries=75)
        before, now = fp32_softmax(q, keys, values, bias), shipped(q, keys, values, bias)
        args = (q, keys, values, bias)
        old_ms = 1e3 * seconds_per_call(lambda args=args: fp32_softmax(*args), 30)
        new_ms = 1e3 * seconds_per_call(lambda args=args, shipped=shipped: shipped(*args), 30)
        gap = float((now - sdpa(q, keys, values, bias)).abs().max())
        print(f"{fed:5}{cached:8}{old_ms:17.2f}{new_ms:17.2f}{str(torch.equal(before, now)):>13}{gap:17.4f}")


if __name__ == "__main__":
    main()
