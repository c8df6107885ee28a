"""The lean forward's product shapes: numpy's OpenBLAS fp32 (column-major weight, as the engine), torch's fp32 (MKL)
and torch's bf16 (oneDNN), two threads, GFLOP/s.

    .venv/bin/python docs/results/bench-bf16-products/gemm.py
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python docs/results/bench-bf16-products/gemm.py
"""

import time
from collections.abc import Callable

import numpy as np
import torch
from deepresearch.agent.model.embedded_bf16 import seconds_per_call

torch.set_num_threads(2)
PAUSE_S = 0.3  # between libraries: oneDNN's time depends on what ran just before it


def per_call(fn: Callable[[], object], calls: int = 20) -> float:
    time.sleep(PAUSE_S)
    return seconds_per_call(fn, calls)


def rates(rows: int, inputs: int, outputs: int) -> tuple[float, float, float]:
    x, w = torch.randn(rows, inputs), torch.randn(inputs, outputs)
    x_np, w_np = x.numpy(), np.asfortranarray(w.numpy())
    x_bf16, w_bf16 = x.bfloat16(), w.bfloat16()
    gflop = 2 * rows * inputs * outputs / 1e9
    return (gflop / per_call(lambda: x_np @ w_np), gflop / per_call(lambda: x @ w),
            gflop / per_call(lambda: x_bf16 @ w_bf16))


for rows in (32, 64, 400):
    for inputs, outputs in ((576, 1536), (576, 3072), (1536, 576), (576, 49152)):
        openblas, mkl, bf16 = rates(rows, inputs, outputs)
        print(f"{rows:4d} × {inputs} × {outputs}: OpenBLAS fp32 {openblas:5.0f}  torch fp32 {mkl:5.0f}  "
              f"torch bf16 {bf16:5.0f} GFLOP/s")
