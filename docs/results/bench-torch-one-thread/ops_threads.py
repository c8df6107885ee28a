"""The lean forward's torch ops (not its OpenBLAS products) at 1 and 2 torch threads, on the shapes of a
decode step (8 rows) and a prefill (240 tokens), with OMP_WAIT_POLICY=PASSIVE as the engine runs them.
Microseconds per call, best of 3 runs of 200 calls.

    OMP_WAIT_POLICY=PASSIVE .venv/bin/python docs/results/bench-torch-one-thread/ops_threads.py
"""

import os
import time
from types import SimpleNamespace

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from deepresearch.agent.model.embedded_forward import (  # noqa: E402
    _rms_norm,
    _rotate,
    attention_mask,
    biased_attention,
    grouped_bias,
)

HIDDEN, HEADS, KV_HEADS, DIM, INTERMEDIATE = 576, 9, 3, 64, 1536


def per_call_us(run, calls: int = 200) -> float:
    best = float("inf")
    for _ in range(3):
        for _ in range(5):
            run()
        started = time.perf_counter()
        for _ in range(calls):
            run()
        best = min(best, (time.perf_counter() - started) / calls)
    return best * 1e6


def ops(tokens: int, cached: int) -> dict[str, object]:
    x, residual = torch.randn(tokens, HIDDEN), torch.randn(tokens, HIDDEN)
    norm = SimpleNamespace(weight=torch.randn(HIDDEN), variance_epsilon=1e-5)
    both = torch.randn(tokens, (HEADS + 2 * KV_HEADS) * DIM)  # a q, k, v product's output
    qk = both[:, : (HEADS + KV_HEADS) * DIM].view(tokens, HEADS + KV_HEADS, DIM)
    angles = torch.randn(tokens, DIM // 2)
    angles = torch.cat((angles, angles), dim=-1)
    cos, sin = angles.cos()[:, None], angles.sin()[:, None]
    gate_up = torch.randn(tokens, 2 * INTERMEDIATE)
    gate, up = gate_up.split(INTERMEDIATE, dim=-1)
    rows, fed = (tokens, 1) if cached else (1, tokens)
    q = torch.randn(rows, HEADS, fed, DIM)
    keys, values = torch.randn(rows, KV_HEADS, cached + fed, DIM), torch.randn(rows, KV_HEADS, cached + fed, DIM)
    visible = attention_mask(torch.ones((rows, cached + fed), dtype=torch.long), fed)
    bias = None if visible is None else grouped_bias(visible, HEADS // KV_HEADS)
    return {
        "RMSNorm": lambda: _rms_norm(x, norm),
        "RoPE (q and k)": lambda: _rotate(qk, cos, sin),
        "SiLU(gate) * up": lambda: F.silu(gate).mul_(up),
        "residual add": lambda: x + residual,
        "attention": lambda: biased_attention(q, keys, values, bias),
    }


def main() -> None:
    shapes = {"decode, 8 rows × 700 cached": (8, 700), "prefill, 240 tokens": (240, 0)}
    print("| op | shape | 2 threads µs | 1 thread µs |")
    print("|---|---|---|---|")
    for shape, (tokens, cached) in shapes.items():
        for name, run in ops(tokens, cached).items():
            times = []
            for threads in (2, 1):
                torch.set_num_threads(threads)
                times.append(per_call_us(run))
            print(f"| {name} | {shape} | {times[0]:.0f} | {times[1]:.0f} |")


if __name__ == "__main__":
    main()
