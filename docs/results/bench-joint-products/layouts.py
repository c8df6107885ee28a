"""One-off measurement behind embedded_products.py: OpenBLAS's x @ Wᵀ over the model's 30 layers of products
(q/k/v joint 960×576, o 576×576, gate/up joint 3072×576, down 576×1536) with W row-major (as loaded) or
column-major (Wᵀ contiguous), at 1–400 rows, and the vocabulary projection (49152×576).

    .venv/bin/python docs/results/bench-joint-products/layouts.py
"""

import time

import numpy as np

SHAPES = [(960, 576), (576, 576), (3072, 576), (576, 1536)] * 30
rng = np.random.default_rng(0)
ROW_MAJOR = [rng.standard_normal((n, k), dtype=np.float32) * 0.02 for n, k in SHAPES]
COLUMN_MAJOR = [np.ascontiguousarray(w.T) for w in ROW_MAJOR]  # Wᵀ as it sits in memory
HEAD = rng.standard_normal((49152, 576), dtype=np.float32)
HEAD_T = np.ascontiguousarray(HEAD.T)


def ms(rows: int, layout: str, head: bool = False) -> float:
    x = {k: rng.standard_normal((rows, k), dtype=np.float32) for k in (576, 1536)}

    def once() -> None:
        if head:
            np.matmul(x[576], HEAD.T if layout == "row" else HEAD_T)
            return
        for i, (_, k) in enumerate(SHAPES):
            np.matmul(x[k], ROW_MAJOR[i].T if layout == "row" else COLUMN_MAJOR[i])

    once()
    repeats = 5 if rows >= 64 else 10
    start = time.perf_counter()
    for _ in range(repeats):
        once()
    return (time.perf_counter() - start) / repeats * 1000


print("rows  layers row-major  column-major (ms)   head row-major  column-major (ms)")
for rows in (1, 3, 5, 8, 16, 64, 400):
    print(f"{rows:4d}  {ms(rows, 'row'):17.1f} {ms(rows, 'col'):13.1f}   {ms(rows, 'row', True):15.1f} "
          f"{ms(rows, 'col', True):13.1f}")
