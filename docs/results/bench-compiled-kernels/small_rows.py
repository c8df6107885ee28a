"""A small-row kernel that reads each weight once for all rows, JIT-compiled with numba, against the lean
forward's products: the 30 layers' products of the 135M model at N rows, one call per product as in a step.

    .venv/bin/pip install numba==0.68.0   # not a dependency of the package
    .venv/bin/python docs/results/bench-compiled-kernels/small_rows.py

OpenBLAS's GEMM packs the weights on every call, so 4-8 rows take 2-3x the 1-row GEMV (~17 ms, the memory
bound). The kernel here walks J rows of W at a time and keeps R x J running dot products, so each weight
element is loaded once for all R rows (generated per R, with J chosen so the accumulators fit in registers).
Columns, ms, best of 9: `lean` the engine today (`matmul_t`), `numba` this kernel over the same weights
(row-major [out, in]), and the kernel's bandwidth on one call over all K=576 weights stacked (318 MB), where
no per-call cost hides it. numba's threads come from OpenMP: with OMP_WAIT_POLICY=PASSIVE (what the engine
sets, agent/model/embedded.py) each of the 120 calls of a step pays a wake-up of ~70 us, ~9 ms a step.
"""

import time
import timeit

import numba
import numpy as np
import torch
from deepresearch.agent.model.embedded_products import matmul_t
from numba import njit, prange

numba.set_num_threads(2)
torch.set_num_threads(2)
SHAPES = [(576, 960), (576, 576), (576, 3072), (1536, 576)]  # (in, out): q/k/v, o, gate/up, down
LAYERS = 30
KERNELS = {1: 8, 2: 4, 4: 4, 8: 2}  # rows -> weight rows per block (J)


def kernel(rows: int, block: int):
    """out[r, j] = x[r] . w[j] for `rows` rows, `block` weight rows at a time (w's rows: a multiple of it),
    accumulators as named scalars so LLVM keeps them in registers (an array of them stays in memory, and
    LLVM then does not vectorise the loop)."""
    sums = [f"s{r}_{j}" for r in range(rows) for j in range(block)]
    source = [
        "def small_rows(x, w, out):",
        f"    for b in prange(w.shape[0] // {block}):",
        f"        j0 = b * {block}",
        *[f"        {s} = np.float32(0.0)" for s in sums],
        "        for k in range(x.shape[1]):",
        *[f"            w{j} = w[j0 + {j}, k]" for j in range(block)],
        *[f"            x{r} = x[{r}, k]" for r in range(rows)],
        *[f"            s{r}_{j} += x{r} * w{j}" for r in range(rows) for j in range(block)],
        *[f"        out[{r}, j0 + {j}] = s{r}_{j}" for r in range(rows) for j in range(block)],
    ]
    namespace = {"np": np, "prange": prange}
    exec("\n".join(source), namespace)  # noqa: S102 - generated from the integers above only
    return njit(parallel=True, fastmath=True, boundscheck=False)(namespace["small_rows"])


def best_ms(fn, repeats: int = 9) -> float:
    fn()
    return min(timeit.repeat(fn, number=1, repeat=repeats)) * 1000


def main() -> None:
    rng = np.random.default_rng(0)
    row_major = [[(rng.standard_normal((out, inp)) * 0.02).astype(np.float32) for inp, out in SHAPES]
                 for _ in range(LAYERS)]
    column_major = [[torch.from_numpy(w.T.copy()).t() for w in layer] for layer in row_major]  # as the engine's
    stacked = np.ascontiguousarray(np.concatenate([w for layer in row_major for w in layer if w.shape[1] == 576]))
    print(f"threading layer: OpenMP; {stacked.nbytes / 1e6:.0f} MB stacked")
    print(f"{'rows':>5}{'lean':>8}{'numba':>8}{'compile s':>11}{'max diff':>10}{'stacked GB/s':>14}")
    for rows, block in KERNELS.items():
        run = kernel(rows, block)
        xs = {inp: rng.standard_normal((rows, inp)).astype(np.float32) for inp, _ in SHAPES}
        outs = [[np.empty((rows, w.shape[0]), np.float32) for w in layer] for layer in row_major]
        started = time.perf_counter()
        run(xs[576], row_major[0][0], outs[0][0])
        compile_s = time.perf_counter() - started

        def numba_products(run=run, xs=xs, outs=outs) -> None:
            for layer, layer_outs in zip(row_major, outs, strict=True):
                for w, out in zip(layer, layer_outs, strict=True):
                    run(xs[w.shape[1]], w, out)

        def lean_products(xs=xs) -> None:
            for layer in column_major:
                for w in layer:
                    matmul_t(torch.from_numpy(xs[w.shape[1]]), w)

        numba_ms, lean_ms = best_ms(numba_products), best_ms(lean_products)
        pairs = [(w, out) for layer, layer_outs in zip(row_major, outs, strict=True)
                 for w, out in zip(layer, layer_outs, strict=True)]
        diff = max(float(np.abs(out - xs[w.shape[1]] @ w.T).max()) for w, out in pairs)
        out = np.empty((rows, stacked.shape[0]), np.float32)
        stacked_ms = best_ms(lambda run=run, xs=xs, out=out: run(xs[576], stacked, out))
        print(f"{rows:>5}{lean_ms:>8.1f}{numba_ms:>8.1f}{compile_s:>11.2f}{diff:>10.1e}"
              f"{stacked.nbytes / stacked_ms / 1e6:>14.1f}", flush=True)


if __name__ == "__main__":
    main()
