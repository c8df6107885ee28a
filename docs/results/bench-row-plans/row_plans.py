"""One GEMM against one GEMV per row, for each of the 135M model's weight shapes, at the row counts a decode step
feeds (session 38, issue 14). The weights are laid out as the lean forward lays them out (column-major: Wᵀ
[in, out] contiguous), 30 copies of each layer shape as in the model, so a product reads them from memory.

    OMP_WAIT_POLICY=PASSIVE .venv/bin/python docs/results/bench-row-plans/row_plans.py

Prints ms for all 30 layers' products of a shape (the vocabulary: one product), the median of 25 runs.
"""

from __future__ import annotations

import time

import numpy as np

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


def per_row(x: np.ndarray, wt: np.ndarray, block: int | None = None) -> np.ndarray:
    out = np.empty((len(x), wt.shape[1]), np.float32)
    block = block or wt.shape[1]
    for first in range(0, wt.shape[1], block):
        part = wt[:, first : first + block]
        for row in range(len(x)):
            np.matmul(x[row], part, out=out[row, first : first + block])
    return out


def layer_cells(x: np.ndarray, weights: list[np.ndarray], method: str) -> list[float]:
    def product(rows: int) -> None:
        for w in weights:
            np.matmul(x[:rows], w) if method == "GEMM" else per_row(x[:rows], w)

    return [median_ms(lambda rows=rows: product(rows)) for rows in ROWS]


def vocabulary_cells(x: np.ndarray, vocabulary: np.ndarray, block: int | None) -> list[float]:
    """block 0: one GEMM; None: one GEMV per row over the whole weight; else per row over blocks of columns."""
    if block == 0:
        return [median_ms(lambda rows=rows: np.matmul(x[:rows], vocabulary)) for rows in ROWS]
    return [median_ms(lambda rows=rows: per_row(x[:rows], vocabulary, block)) for rows in ROWS]


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"{'weight':18} {'method':22}" + "".join(f"{r:>7}" for r in ROWS))
    for name, (inputs, outputs) in SHAPES.items():
        weights = [rng.standard_normal((inputs, outputs), dtype=np.float32) for _ in range(30)]
        x = rng.standard_normal((max(ROWS), inputs), dtype=np.float32)
        for method in ("GEMM", "GEMV per row"):
            cells = layer_cells(x, weights, method)
            print(f"{name:18} {method:22}" + "".join(f"{c:7.1f}" for c in cells), flush=True)
    vocabulary = rng.standard_normal((576, 49152), dtype=np.float32)
    x = rng.standard_normal((max(ROWS), 576), dtype=np.float32)
    for method, block in (("GEMM", 0), ("GEMV per row", None), ("GEMV per row, 2,048", 2048),
                          ("GEMV per row, 4,096", 4096), ("GEMV per row, 8,192", 8192)):
        cells = vocabulary_cells(x, vocabulary, block)
        print(f"{'vocab 576→49152':18} {method:22}" + "".join(f"{c:7.1f}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
