"""One-row products (decode at batch 1) in bf16 through torch against fp32 through OpenBLAS (numpy), ms per call,
the same weight each call (session 37, Zen 4).

    OMP_WAIT_POLICY=PASSIVE .venv/bin/python docs/results/bench-session37-zen4/gemv.py
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import torch

SHAPES = [(576, 1536), (576, 3072), (1536, 576), (576, 49152)]  # (in, out): the model's products, the vocabulary


def ms_per_call(call: Callable[[], object], calls: int = 200) -> float:
    for _ in range(10):
        call()
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) / calls * 1e3


def timings(inputs: int, outputs: int) -> dict[str, float]:
    weight, x = torch.randn(outputs, inputs), torch.randn(1, inputs)
    weight_bf16, x_bf16 = weight.to(torch.bfloat16), x.to(torch.bfloat16)
    weight_bf16_t = weight_bf16.t().contiguous()
    weight_np, x_np = np.ascontiguousarray(weight.numpy().T), x.numpy()  # column-major, as the engine keeps it
    forms = {
        "fp32 linear": lambda: torch.nn.functional.linear(x, weight),
        "np fp32 x@Wt": lambda: x_np @ weight_np,
        "bf16 linear": lambda: torch.nn.functional.linear(x_bf16, weight_bf16),
        "bf16 mv W@x": lambda: torch.mv(weight_bf16, x_bf16[0]),
        "bf16 x@Wbt": lambda: x_bf16 @ weight_bf16_t,
        "bf16 mm Wb@xT": lambda: weight_bf16 @ x_bf16.t(),
    }
    return {name: round(ms_per_call(call), 3) for name, call in forms.items()}


def main() -> None:
    torch.set_num_threads(2)
    for inputs, outputs in SHAPES:
        print(inputs, outputs, timings(inputs, outputs), flush=True)


if __name__ == "__main__":
    main()
