"""One GEMM against one GEMV per row, for each of the 135M model's weight shapes, at the row counts a decode step
feeds (session 38, issue 14). The weights are laid out as the lean forward lays them out (column-major: Wᵀ
[in, out] contiguous), 30 copies of each layer shape as in the model, so a product reads them from memory; the
products are the engine's own (`matmul_t` under a `RowPlan`).

    OMP_WAIT_POLICY=PASSIVE .venv/bin/python docs/results/bench-row-plans/row_plans.py

Prints ms for all 30 layers' products of a shape (the vocabulary: one product), the median of 25 runs.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from deepresearch.agent.model.embedded_products import RowPlan, matmul_t

SHAPES = {"q,k,v 576→960": (576, 960), "o 576→576": (576, 576), "gate,up 576→3072": (576, 3072),
          "down 1536→576": (1536, 576)}
ROWS = (1, 2, 3, 4, 5, 6, 8, 9, 12, 16)


def median_ms(run, repeats: int = 25) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return 1e3 * sorted(times)[repeats // 2]


def cells(x: torch.Tensor, weights: list[torch.Tensor], block: int | None, gemm: bool) -> list[float]:
    """ms per row count for the engine's own product (`matmul_t`) over `weights`: one GEMM, or one GEMV per row
    (over blocks of `block` output columns, if set)."""
    def product(rows: int) -> None:
        plan = RowPlan(gemv_max_rows=1 if gemm else rows, block=block)
        for w in weights:
            matmul_t(x[:rows], w, plan)

    return [median_ms(lambda rows=rows: product(rows)) for rows in ROWS]


def column_major(rng: np.random.Generator, inputs: int, outputs: int) -> torch.Tensor:
    """A weight W [out, in] stored as Wᵀ, as JointProduct lays it out."""
    return torch.from_numpy(rng.standard_normal((inputs, outputs), dtype=np.float32)).t()


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"{'weight':18} {'method':22}" + "".join(f"{r:>7}" for r in ROWS))
    for name, (inputs, outputs) in SHAPES.items():
        weights = [column_major(rng, inputs, outputs) for _ in range(30)]
        x = torch.from_numpy(rng.standard_normal((max(ROWS), inputs), dtype=np.float32))
        for method, gemm in (("GEMM", True), ("GEMV per row", False)):
            row = cells(x, weights, None, gemm)
            print(f"{name:18} {method:22}" + "".join(f"{c:7.1f}" for c in row), flush=True)
    vocabulary = [column_major(rng, 576, 49152)]
    x = torch.from_numpy(rng.standard_normal((max(ROWS), 576), dtype=np.float32))
    for method, block, gemm in (("GEMM", None, True), ("GEMV per row", None, False),
                                ("GEMV per row, 2,048", 2048, False), ("GEMV per row, 4,096", 4096, False),
                                ("GEMV per row, 8,192", 8192, False)):
        row = cells(x, vocabulary, block, gemm)
        print(f"{'vocab 576→49152':18} {method:22}" + "".join(f"{c:7.1f}" for c in row), flush=True)


if __name__ == "__main__":
    main()
