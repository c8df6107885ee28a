"""bench/model.py's agent workload with the layers' small-row products on small_rows.py's numba kernel.

    .venv/bin/pip install numba==0.68.0   # not a dependency of the package
    .venv/bin/python docs/results/bench-compiled-kernels/workload_small_rows.py [--from-rows 2] \
        --workload agent --engines verified --skip-vllm

In this process only, the lean forward's `matmul_t` sends products of `--from-rows`..8 rows over a layer
weight (not the 113 MB vocabulary projection) to the kernel, on a row-major copy of the weight; everything
else is bench/model.py unchanged. Compare with bench/model.py's own output run next to it.
"""

import argparse
import runpy
import sys
import time
from pathlib import Path

import numba
import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import deepresearch.agent.model.embedded_products as products  # noqa: E402
from small_rows import kernel  # noqa: E402

BLOCKS = {1: 8, 2: 4, 3: 4, 4: 4, 5: 2, 6: 2, 7: 2, 8: 2}  # rows -> weight rows per block


def main() -> None:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--from-rows", type=int, default=1)
    args, rest = parser.parse_known_args()
    numba.set_num_threads(2)
    started = time.perf_counter()
    kernels = {}
    for rows, block in BLOCKS.items():
        if rows >= args.from_rows:
            run = kernel(rows, block)
            run(np.zeros((rows, 8), np.float32), np.zeros((8, 8), np.float32), np.zeros((rows, 8), np.float32))
            kernels[rows] = run
    print(f"numba kernels for {sorted(kernels)} rows compiled in {time.perf_counter() - started:.1f} s", flush=True)
    row_major: dict[tuple[int, tuple[int, ...]], np.ndarray] = {}
    lean = products.matmul_t

    def matmul_t(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, x.shape[-1])
        if (len(rows) not in kernels or weight.numel() * 4 > products.GEMV_MAX_WEIGHT_BYTES
                or weight.shape[0] % BLOCKS[len(rows)]):  # the kernel covers whole blocks only
            return lean(x, weight)
        key = (weight.data_ptr(), tuple(weight.shape))
        if key not in row_major:
            row_major[key] = np.ascontiguousarray(weight.detach().numpy())
        out = np.empty((len(rows), weight.shape[0]), np.float32)
        kernels[len(rows)](np.ascontiguousarray(rows.numpy()), row_major[key], out)
        return torch.from_numpy(out).view(*x.shape[:-1], weight.shape[0])

    products.matmul_t = matmul_t
    sys.argv = [str(HERE.parents[2] / "bench" / "model.py"), *rest]
    runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
