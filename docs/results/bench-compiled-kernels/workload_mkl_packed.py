"""bench/model.py's agent workload with the layers' 4-8-row products on MKL-packed weights: what inductor's
frozen graph computes them with (products.py), without compiling anything.

    .venv/bin/python docs/results/bench-compiled-kernels/workload_mkl_packed.py \
        --workload agent --engines verified --skip-vllm

In this process only, the lean forward's `matmul_t` sends products of 4-8 rows over a layer weight (not the
vocabulary projection) to torch.ops.mkl._mkl_linear on a copy of the weight packed once for 8 rows; fewer
rows are padded with zero rows to 8 (torch's op takes the packed path only at the batch size it was packed
for). Everything else is bench/model.py unchanged; compare with its own output run next to it.
"""

import runpy
import sys
from pathlib import Path

import deepresearch.agent.model.embedded_products as products
import torch

PACKED_ROWS = 8
FIRST_ROWS = 4


def main() -> None:
    packed: dict[tuple[int, tuple[int, ...]], tuple[torch.Tensor, torch.Tensor]] = {}
    lean = products.matmul_t

    def matmul_t(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, x.shape[-1])
        if not FIRST_ROWS <= len(rows) <= PACKED_ROWS or weight.numel() * 4 > products.GEMV_MAX_WEIGHT_BYTES:
            return lean(x, weight)
        key = (weight.data_ptr(), tuple(weight.shape))
        if key not in packed:
            row_major = weight.detach().contiguous()
            packed[key] = (torch.ops.mkl._mkl_reorder_linear_weight(row_major, PACKED_ROWS), row_major)
        padded = torch.cat([rows, rows.new_zeros(PACKED_ROWS - len(rows), rows.shape[1])]).contiguous()
        out = torch.ops.mkl._mkl_linear(padded, *packed[key], None, PACKED_ROWS)[: len(rows)]
        return out.reshape(*x.shape[:-1], weight.shape[0])

    products.matmul_t = matmul_t
    sys.argv = [str(Path(__file__).resolve().parents[3] / "bench" / "model.py"), *sys.argv[1:]]
    runpy.run_path(sys.argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
