"""Matrix products on the packaged GGUF's own quantised blocks, for the lean forward's steps of a few rows.

Why: a decode step of a few rows is bound by reading the weights, and the fp32 weights the engine converts
the GGUF to are 538 MB a pass; the file's own blocks (4-bit Q4_1 for the layers, 8-bit Q8_0 for the tied
vocabulary) are 96 MB. `gguf_products.c` multiplies by the blocks directly, forming each weight exactly as
the fp32 conversion did (the same numbers: the products differ from OpenBLAS's only by the order of the
sums). Steps of more rows (prefills, long drafts) are bound by arithmetic and stay on OpenBLAS's fp32 GEMM.

The kernel is compiled once per machine (build.py); with no compiler, or weights that are not the GGUF's, the
engine says why once and uses the fp32 products. The blocks are the memory-mapped file's bytes: nothing is copied.
"""

from __future__ import annotations

import ctypes
import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ...base import ModelError
from ..loaders.gguf_file import BLOCK, read_tensors
from ..loaders.packaged_model import find_gguf, is_converted
from .build import KERNEL_DIR_NAME, KernelError, build_kernel

log = logging.getLogger(__name__)

BlockKind = Literal["q4_1", "q8_0"]
BLOCK_BYTES: dict[BlockKind, int] = {kind: BLOCK[kind][1] for kind in ("q4_1", "q8_0")}  # per 32 weights
# A product of up to this many rows uses the blocks: the 30 layers' products on this Zen 4, on two threads
# against OpenBLAS's fp32 on two: 8.9 / 15.1 / 22.0 / 43.1 ms at 1 / 4 / 8 / 24 rows against 20.0 / 30.7 /
# 38.8 / 59.4 (dev/results/bench-gguf-products/). Longer steps are bound by arithmetic, where OpenBLAS's GEMM
# is faster.
GGUF_MAX_ROWS = 24
VERIFIED_ROWS = 16  # rows of each weight compared with the fp32 weights at load


@dataclass(frozen=True)
class BlockTensor:
    """One GGUF tensor's blocks: `data` [tensor rows, bytes a row] (the file's bytes), `rows` the tensor row
    of each output column (None: in order)."""

    kind: BlockKind
    data: np.ndarray
    columns: int
    rows: np.ndarray | None = None

    @property
    def outputs(self) -> int:
        return len(self.data) if self.rows is None else len(self.rows)

    def dequantize(self, outputs: np.ndarray) -> np.ndarray:
        """The fp32 weights of the given output columns [len(outputs), columns], as the GGUF's fp32 conversion
        forms them (for checking the loaded weights)."""
        index = outputs if self.rows is None else self.rows[outputs]
        blocks = self.data[index].reshape(len(index), -1, BLOCK_BYTES[self.kind])
        d = blocks[:, :, :2].copy().view(np.float16).astype(np.float32)
        if self.kind == "q8_0":
            return (blocks[:, :, 2:].view(np.int8).astype(np.float32) * d).reshape(len(index), -1)
        m = blocks[:, :, 2:4].copy().view(np.float16).astype(np.float32)
        q = blocks[:, :, 4:]
        nibbles = np.concatenate([q & 15, q >> 4], axis=2).astype(np.float32)
        return (d * nibbles + m).reshape(len(index), -1)


class BlockProduct:
    """x @ Wᵀ for W the output columns of `parts` side by side (q, k, v as one product), on the blocks."""

    def __init__(self, parts: list[BlockTensor], kernel: ctypes.CDLL) -> None:
        columns = {part.columns for part in parts}
        if len(columns) != 1 or next(iter(columns)) % 32:
            raise ValueError("a block product's parts need one input size, a multiple of 32")
        self.parts = parts
        self.columns = columns.pop()
        self.outputs = sum(part.outputs for part in parts)
        self._calls = [(getattr(kernel, f"{part.kind}_products"), part.data.ctypes.data,
                        None if part.rows is None else part.rows.ctypes.data, part.outputs) for part in parts]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """x [rows, columns] float32 → [rows, outputs]."""
        if x.ndim != 2 or x.shape[1] != self.columns or x.dtype != np.float32:
            raise ValueError(f"a block product takes float32 [rows, {self.columns}], not {x.dtype} {x.shape}")
        x = np.ascontiguousarray(x)  # the kernel reads raw memory: shape and type are checked above
        rows = len(x)
        out = np.empty((rows, self.outputs), dtype=np.float32)
        start = 0
        for function, data, order, count in self._calls:
            function(x.ctypes.data, rows, self.columns, data, order, out[:, start:].ctypes.data, self.outputs,
                     0, count)
            start += count
        return out

    def dequantize(self, outputs: np.ndarray) -> np.ndarray:
        """The fp32 weights of the given output columns of the joint product."""
        pieces, start = [], 0
        for part in self.parts:
            mine = outputs[(outputs >= start) & (outputs < start + part.outputs)]
            pieces.append(part.dequantize(mine - start))
            start += part.outputs
        return np.concatenate(pieces)


@dataclass
class GGUFLayer:
    qkv: BlockProduct
    o_proj: BlockProduct
    gate_up: BlockProduct
    down: BlockProduct


@dataclass
class GGUFBlocks:
    """The products of a GGUF Llama model's layers and vocabulary, in transformers' output order."""

    layers: list[GGUFLayer]
    head: BlockProduct
    source: Path


def load_gguf_blocks(gguf_path: Path, config: Any, kernel_dir: Path, threads: int = 1) -> GGUFBlocks:
    """The block products of `gguf_path`, a Llama model in Q4_1 / Q8_0 (KernelError when that is not what it
    holds or the kernel cannot be built), computed on `threads` threads (1 or 2). q and k rows are put back in
    transformers' order: llama.cpp's converter interleaves each head's two rotary halves."""
    kernel = build_kernel(kernel_dir)
    kernel.gguf_set_threads(threads)
    try:
        tensors = read_tensors(Path(gguf_path))
    except (OSError, ValueError) as exc:
        raise KernelError(f"cannot read {gguf_path}: {exc}") from exc
    heads, kv_heads = int(config.num_attention_heads), int(config.num_key_value_heads)

    def part(name: str) -> BlockTensor:
        tensor = tensors.get(name)
        if tensor is None:
            raise KernelError(f"{gguf_path.name} has no tensor {name}")
        if tensor.kind not in BLOCK_BYTES or tensor.shape[0] % 32:
            raise KernelError(f"{name} is {tensor.kind} {tensor.shape}; the kernel reads q4_1 and q8_0 rows of 32s")
        return BlockTensor(tensor.kind, tensor.data, tensor.shape[0])  # type: ignore[arg-type]

    def unpermuted(name: str, head_count: int) -> BlockTensor:
        tensor = part(name)
        return replace(tensor, rows=_rotary_order(tensor.outputs, head_count))

    layers = [
        GGUFLayer(
            qkv=BlockProduct([unpermuted(f"blk.{i}.attn_q.weight", heads),
                              unpermuted(f"blk.{i}.attn_k.weight", kv_heads), part(f"blk.{i}.attn_v.weight")], kernel),
            o_proj=BlockProduct([part(f"blk.{i}.attn_output.weight")], kernel),
            gate_up=BlockProduct([part(f"blk.{i}.ffn_gate.weight"), part(f"blk.{i}.ffn_up.weight")], kernel),
            down=BlockProduct([part(f"blk.{i}.ffn_down.weight")], kernel),
        )
        for i in range(int(config.num_hidden_layers))
    ]
    head_name = "output.weight" if "output.weight" in tensors else "token_embd.weight"  # tied when absent
    return GGUFBlocks(layers, BlockProduct([part(head_name)], kernel), Path(gguf_path))


def _rotary_order(rows: int, heads: int) -> np.ndarray:
    """The GGUF row holding each transformers row of a q or k projection (the inverse of llama.cpp's
    per-head interleave of the two rotary halves)."""
    half = rows // heads // 2
    return np.arange(rows, dtype=np.int32).reshape(heads, half, 2).swapaxes(1, 2).reshape(rows).copy()


def matches(product: BlockProduct, weight: Any, samples: int = VERIFIED_ROWS) -> bool:
    """Whether the blocks hold exactly `weight` ([outputs, columns], torch or numpy) on evenly spaced rows."""
    array = weight.detach().numpy() if hasattr(weight, "detach") else np.asarray(weight)
    if array.shape != (product.outputs, product.columns):
        return False
    outputs = np.unique(np.linspace(0, product.outputs - 1, samples).astype(np.int64))
    return bool(np.array_equal(product.dequantize(outputs), array[outputs]))


def packaged_blocks(model_dir: Path, config: Any, threads: int = 1) -> GGUFBlocks | None:
    """The block products for a model converted from the packaged GGUF (loaders/packaged_model.py), the kernel built
    beside it; None, with the reason logged, where they cannot be had (products then stay fp32)."""
    if not is_converted(Path(model_dir)):
        return None
    try:
        return load_gguf_blocks(find_gguf(), config, Path(model_dir) / KERNEL_DIR_NAME, threads)
    except (KernelError, ModelError, OSError) as exc:
        log.warning("matrix products of few rows stay fp32: %s", exc)
        return None
