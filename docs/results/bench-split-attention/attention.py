"""One layer's attention, whole on one thread against SplitAttention (two threads), alone and right after an
OpenBLAS product of a prefill's shape (whose idle threads then spin on the second core unless
OPENBLAS_THREAD_TIMEOUT is low). µs per call, mean of 50 after a warm-up.

    OPENBLAS_THREAD_TIMEOUT=28 .venv/bin/python docs/results/bench-split-attention/attention.py
    .venv/bin/python docs/results/bench-split-attention/attention.py        # the package's default, 18

The variable is read when numpy loads OpenBLAS: importing deepresearch first sets it unless it is set.
"""

import os
import sys
import time

# isort: off
import deepresearch  # noqa: F401  (sets OPENBLAS_THREAD_TIMEOUT before numpy loads OpenBLAS)
import numpy as np
# isort: on
import torch
from deepresearch.agent.model.embedded_forward import grouped_bias
from deepresearch.agent.model.embedded_split_attention import SplitAttention, sdpa

CALLS = 50


def inputs(rows: int, fed: int, cached: int) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(0)
    length = cached + fed
    q = torch.randn((rows, 3, 3 * fed, 64), generator=gen)
    keys, values = torch.randn((2, rows, 3, length, 64), generator=gen)
    visible = (torch.arange(length) <= torch.arange(cached, length)[:, None])[None, None].expand(rows, 1, fed, length)
    return q, keys, values, grouped_bias(visible, 3)


def timed(attend, args, before=None) -> float:
    attend(*args)
    spent = 0.0
    for _ in range(CALLS):
        if before is not None:
            before()
        started = time.perf_counter()
        attend(*args)
        spent += time.perf_counter() - started
    return spent / CALLS * 1e6


def main() -> None:
    torch.set_num_threads(1)
    split = SplitAttention(min_pairs=0)
    x = np.random.default_rng(0).random((280, 576), dtype=np.float32)
    w = np.random.default_rng(1).random((576, 1536), dtype=np.float32)
    print(f"OPENBLAS_THREAD_TIMEOUT={os.environ.get('OPENBLAS_THREAD_TIMEOUT')}, torch {torch.__version__}, "
          f"{sys.platform}")
    print(f"{'rows, fed, cached':>20} {'whole':>8} {'split':>8} {'product, whole':>15} {'product, split':>15}")
    for shape in [(8, 1, 600), (1, 5, 600), (4, 4, 600), (8, 8, 600), (1, 64, 400), (1, 150, 300), (1, 280, 170)]:
        args = inputs(*shape)
        cells = [timed(sdpa, args), timed(split, args), timed(sdpa, args, lambda: x @ w),
                 timed(split, args, lambda: x @ w)]
        print(f"{str(shape):>20} " + " ".join(f"{c:>8.0f}" if i < 2 else f"{c:>15.0f}" for i, c in enumerate(cells)))


if __name__ == "__main__":
    main()
