"""The lean forward's matrix products: x @ Wᵀ in OpenBLAS, on weights laid out for it.

Layout: a linear layer's weight W [out, in] is kept column-major, i.e. Wᵀ [in, out] is what sits
contiguously in memory. OpenBLAS's GEMM on a few rows then streams Wᵀ as it is instead of packing a
transposed copy first: 25–30 % less time for the model's layers at 3–16 rows, about the same at 1 and
64 rows, ~10 % less at a 400-token prefill (Intel Xeon, AVX-512; dev/results/bench-joint-products/).
The price is one copy of the weights when the forward is built (~0.34 s).
Layers that read the same input (q, k, v; gate, up) are column blocks of one such matrix, so a step
computes them in one product instead of three or two.

The layers' own `weight` parameters become views into that matrix, so transformers' forward, peft's
in-place merges and anything else that reads or adds to them sees the very numbers the products use.
Whatever replaces a weight tensor instead (transformers' model taking over the parameters when an
adapter is first loaded, a merge that assigns a new tensor) is noticed on the next product, which lays
the layers out again from their current weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..kernels.gguf_blocks import GGUF_MAX_ROWS
from .bf16 import bf16_product

if TYPE_CHECKING:
    from ..kernels.gguf_blocks import BlockProduct

# OpenBLAS's GEMM on a few rows packs the whole weight first, so it costs up to ~5× the 1-row GEMV; one GEMV
# per row reads a weight from memory once and then from the cache. How many rows that pays for depends on the
# weight's shape (`RowPlan`); the vocabulary projection (113 MB) outgrows the cache, so its per-row GEMVs run
# over blocks of output columns that fit in it. dev/results/bench-row-plans/ has the measurements (AMD Zen 4);
# the Intel Xeon's (2 rows 39.5 vs 25.5 ms for all 30 layers, 8 rows 42.5 vs 61.9) chose 3 rows for every layer.
TRANSPOSE_BLOCK = 512  # weight rows per block when laying a weight out column-major


@dataclass(frozen=True)
class RowPlan:
    """How a product of a given weight is computed: one GEMV per row up to `gemv_max_rows` rows (over blocks of
    `block` output columns, if set), else one GEMM."""

    gemv_max_rows: int = 3
    block: int | None = None


DEFAULT_PLAN = RowPlan()


def matmul_t(x: torch.Tensor, weight: torch.Tensor, plan: RowPlan = DEFAULT_PLAN) -> torch.Tensor:
    """x @ weight.T (a linear layer without bias) in OpenBLAS; no copy of the weight, whatever its layout."""
    rows = x.reshape(-1, x.shape[-1]).contiguous().numpy()
    w = weight.detach().numpy()
    if 1 < len(rows) <= plan.gemv_max_rows:
        out = np.empty((len(rows), w.shape[0]), dtype=w.dtype)
        block = plan.block or w.shape[0]
        for first in range(0, w.shape[0], block):  # a block's later rows read it from the cache
            part = w[first : first + block]
            for row, target in zip(rows, out, strict=True):
                np.matmul(part, row, out=target[first : first + block])
    else:
        out = np.matmul(rows, w.T)
    return torch.from_numpy(out).view(*x.shape[:-1], weight.shape[0])


class JointProduct:
    """The linear layers `linears` (no bias, one input size) as column blocks of one column-major matrix,
    computed in one product."""

    def __init__(self, linears: list[Any], plan: RowPlan = DEFAULT_PLAN) -> None:
        self._linears = linears
        self._plan = plan
        self.blocks: BlockProduct | None = None  # the same weights as GGUF blocks, for products of a few rows
        self._bf16: tuple[int, torch.Tensor] | None = None  # (the matrix's address, its bf16 copy)
        self._matrix = torch.empty(0)
        self._views: list[torch.Tensor] = []
        self._pointers: list[int] = []
        self._lay_out()

    def _lay_out(self) -> None:
        weights = [linear.weight.detach() for linear in self._linears]
        # [in, Σ out]: Wᵀ of every layer, side by side, copied in blocks of rows: one transposing copy of the
        # memory-mapped 113 MB vocabulary matrix took the forward's start-up from 0.34 to 1.47 s.
        self._matrix = torch.empty((weights[0].shape[1], sum(w.shape[0] for w in weights)), dtype=weights[0].dtype)
        self._views, start = [], 0
        for linear, w in zip(self._linears, weights, strict=True):
            for first in range(0, w.shape[0], TRANSPOSE_BLOCK):
                block = w[first : first + TRANSPOSE_BLOCK]
                self._matrix[:, start + first : start + first + len(block)].copy_(block.t())
            view = self._matrix[:, start : start + w.shape[0]].t()
            linear.weight.data = view  # same Parameter object: whoever shares it sees the new layout
            self._views.append(view)
            start += w.shape[0]
        self._pointers = [view.data_ptr() for view in self._views]

    def _laid_out(self) -> bool:
        # A weight starting where its view does is that view: the matrix is held here, so no other
        # allocation can start inside it, and a re-laid-out copy would be a new allocation.
        return all(linear.weight.data_ptr() == pointer for linear, pointer in zip(self._linears, self._pointers,
                                                                                   strict=True))

    def weight(self) -> torch.Tensor:
        """The joint weight [Σ out, in] (a view of the column-major matrix), laid out again first if any
        layer's weight tensor was replaced since."""
        if not self._laid_out():
            self._lay_out()
        return self._matrix.t()

    def bf16_columns(self) -> torch.Tensor:
        """Wᵀ [in, Σ out] in bf16, copied again when the weights were laid out again. An in-place change of the
        weights (peft's merge) is not seen, so callers use it only on the file's weights, as the GGUF blocks."""
        self.weight()  # lays the matrix out again if a layer's weight was replaced
        if self._bf16 is None or self._bf16[0] != self._matrix.data_ptr():
            self._bf16 = (self._matrix.data_ptr(), self._matrix.to(torch.bfloat16))
        return self._bf16[1]

    def __call__(self, x: torch.Tensor, blocks: bool = False, bf16_threads: int = 0) -> torch.Tensor:
        """The layers' outputs side by side [..., Σ out], in their order. A product of few rows reads the GGUF
        blocks when `blocks` (the caller knows the weights are still the file's: no adapter merged in); one of
        more rows is computed in bf16 on `bf16_threads` threads when that is > 0 (bf16.py; on the file's
        weights too), else in fp32 by OpenBLAS."""
        rows = x.reshape(-1, x.shape[-1])
        if blocks and self.blocks is not None and len(rows) <= GGUF_MAX_ROWS:
            return torch.from_numpy(self.blocks(rows.contiguous().numpy())).view(*x.shape[:-1], -1)
        if bf16_threads and len(rows) > GGUF_MAX_ROWS:
            return bf16_product(rows, self.bf16_columns(), bf16_threads).view(*x.shape[:-1], -1)
        return matmul_t(x, self.weight(), self._plan)

    def split(self, out: torch.Tensor) -> list[torch.Tensor]:
        """Each layer's output: views into `out`."""
        return list(out.split([view.shape[0] for view in self._views], dim=-1))
