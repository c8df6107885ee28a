"""numpy's fp32 OpenBLAS against torch's bf16 (oneDNN) for the lean forward's product shapes, torch on every core.

    .venv/bin/python docs/results/bench-prefill-zen4/gemm.py

oneDNN's time depends on what ran just before it (README.md); each library is timed after a 0.5 s pause.
"""

import os
import time

import numpy as np
import torch
from deepresearch.agent.model.embedded_bf16 import seconds_per_call

torch.set_num_threads(len(os.sched_getaffinity(0)))
PAUSE_S = 0.5


def per_call(fn, calls: int = 20) -> float:
    return seconds_per_call(fn, calls)


for rows in (1, 8, 64, 400):
    for inputs, outputs in ((576, 1536), (576, 3072), (1536, 576)):
        x, w = torch.randn(rows, inputs), torch.randn(inputs, outputs)
        x_np, w_np = x.numpy(), w.numpy()
        x_bf16, w_bf16 = x.bfloat16(), w.bfloat16()
        time.sleep(PAUSE_S)
        fp32 = per_call(lambda: np.matmul(x_np, w_np))  # noqa: B023
        time.sleep(PAUSE_S)
        bf16 = per_call(lambda: x_bf16 @ w_bf16)  # noqa: B023
        print(f"{rows:4d} × {inputs} × {outputs}: OpenBLAS fp32 {fp32 * 1e3:7.3f} ms",
              f"oneDNN bf16 {bf16 * 1e3:7.3f} ms")
