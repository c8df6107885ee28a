"""Prefill attention of one layer, variants of the engine's call (session 30, issue 14): 280 new query tokens
after a 170-token cached prefix, 9 query heads over 3 KV heads of 64, torch on one thread as in the lean
forward. Prints ms per call (best of 5 × 10) and the largest difference from the engine's output.

    .venv/bin/python docs/results/bench-batch8-flops/attention_variants.py
"""

from __future__ import annotations

import time

import torch
import torch.nn.functional as F
from torch.nn.attention.bias import causal_lower_right

torch.set_num_threads(1)
torch.manual_seed(0)
PREFIX, NEW, HEADS, KV_HEADS, DIM = 170, 280, 9, 3, 64
GROUP, LENGTH = HEADS // KV_HEADS, PREFIX + NEW
q = torch.randn(1, HEADS, NEW, DIM)
k = torch.randn(1, KV_HEADS, LENGTH, DIM)
v = torch.randn(1, KV_HEADS, LENGTH, DIM)
visible = torch.arange(LENGTH) <= torch.arange(PREFIX, LENGTH)[:, None]
bias = torch.zeros(1, 1, NEW, LENGTH).masked_fill_(~visible, float("-inf")).repeat(1, 1, GROUP, 1)
flash = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu


def engine() -> torch.Tensor:  # embedded_forward.biased_attention: a group's queries as extra rows, additive bias
    return F.scaled_dot_product_attention(q.reshape(1, KV_HEADS, GROUP * NEW, DIM), k, v,
                                          attn_mask=bias).view(1, HEADS, NEW, DIM)


def lower_right_gqa() -> torch.Tensor:
    return F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(NEW, LENGTH), enable_gqa=True)


def boolean_repeated() -> torch.Tensor:
    return F.scaled_dot_product_attention(q, k.repeat_interleave(GROUP, 1), v.repeat_interleave(GROUP, 1),
                                          attn_mask=visible[None, None])


def query_chunks(size: int = 64) -> torch.Tensor:  # each chunk reads only the keys up to its last query
    out = torch.empty(1, HEADS, NEW, DIM)
    for start in range(0, NEW, size):
        end = min(NEW, start + size)
        mask = bias[..., : PREFIX + end].view(1, 1, GROUP, NEW, -1)[:, :, :, start:end].reshape(1, 1, -1, PREFIX + end)
        part = q[:, :, start:end].reshape(1, KV_HEADS, GROUP * (end - start), DIM)
        out[:, :, start:end] = F.scaled_dot_product_attention(part, k[:, :, : PREFIX + end], v[:, :, : PREFIX + end],
                                                              attn_mask=mask).view(1, HEADS, end - start, DIM)
    return out


def prefix_plus_causal() -> torch.Tensor:  # the prefix unmasked + the new tokens causal, merged by log-sum-exp
    o1, l1 = flash(q.reshape(1, KV_HEADS, GROUP * NEW, DIM), k[:, :, :PREFIX], v[:, :, :PREFIX])[:2]
    o2, l2 = flash(q, k[:, :, PREFIX:].repeat_interleave(GROUP, 1), v[:, :, PREFIX:].repeat_interleave(GROUP, 1),
                   is_causal=True)[:2]
    o1, l1 = o1.reshape(1, HEADS, NEW, DIM), l1.reshape(1, HEADS, NEW)
    top = torch.maximum(l1, l2)
    w1, w2 = (l1 - top).exp(), (l2 - top).exp()
    return (o1 * w1[..., None] + o2 * w2[..., None]) / (w1 + w2)[..., None]


def main() -> None:
    reference = engine()
    for name, variant in [("engine (bias, grouped rows)", engine), ("lower-right causal, enable_gqa", lower_right_gqa),
                          ("boolean mask, KV repeated", boolean_repeated), ("query chunks of 64", query_chunks),
                          ("prefix + causal, log-sum-exp", prefix_plus_causal)]:
        error = (variant() - reference).abs().max().item()
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(10):
                variant()
            best = min(best, (time.perf_counter() - start) / 10 * 1e3)
        print(f"{name:32} {best:6.2f} ms   max |diff| {error:.1e}")


if __name__ == "__main__":
    main()
