"""bench/model.py's 41 recorded agent calls, replayed at T 0 by one embedded engine with its layers' products
in fp32 (the lean forward as shipped) and then in int8, side by side in one process: wall, tokens, and the
calls whose parsed output changes.

    .venv/bin/python docs/results/bench-int8-products/workload.py --kind fbgemm-dyn
    .venv/bin/python docs/results/bench-int8-products/workload.py --kind w8a8-int-mm

The int8 products replace embedded_products.JointProduct.__call__ in this process only (the vocabulary
projection stays fp32). Weights are quantised per output channel, re-quantised when the matrix changes.
  fbgemm-dyn   torch.ops.quantized.linear_dynamic (activations quantised per tensor, i.e. over every row of a
               step or prefill at once)
  w8a8-int-mm  torch._int_mm with activations quantised per row
"""

import argparse
import asyncio
import os
import sys
import warnings
from pathlib import Path

import torch

warnings.filterwarnings("ignore", message=".*deprecated.*")
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

from deepresearch.agent.model import embedded_products  # noqa: E402
from deepresearch.agent.model.embedded import EmbeddedChatModel  # noqa: E402
from deepresearch.agent.model.embedded_weights import embedded_model_dir  # noqa: E402
from model_workload import differences, load_workload, replay, requests  # noqa: E402

FP32_CALL = embedded_products.JointProduct.__call__
STATE = {"int8": False}


def _quantised(product, kind: str):
    key = (product._matrix.data_ptr(), product._matrix._version)
    if getattr(product, "_int8_for", None) != key:
        w = product.weight().detach()  # [Σ out, in]
        scale = w.abs().amax(1).clamp_min(1e-8) / 127
        if kind == "fbgemm-dyn":
            q = torch.quantize_per_channel(w.contiguous(), scale.double(), torch.zeros(len(w), dtype=torch.long), 0,
                                           torch.qint8)
            product._int8 = torch.ops.quantized.linear_prepack(q, None)
        else:
            product._int8 = (torch.round(w / scale[:, None]).to(torch.int8).t(), scale)  # [in, out], column-major
        product._int8_for = key
    return product._int8


def int8_call(kind: str):
    def call(self, x: torch.Tensor) -> torch.Tensor:
        if not STATE["int8"]:
            return FP32_CALL(self, x)
        flat = x.reshape(-1, x.shape[-1]).contiguous()
        if kind == "fbgemm-dyn":
            out = torch.ops.quantized.linear_dynamic(flat, _quantised(self, kind), False)
        else:
            q, scale = _quantised(self, kind)
            sx = flat.abs().amax(-1, keepdim=True).clamp_min(1e-8) / 127
            out = torch.mul(torch._int_mm(torch.round(flat / sx).to(torch.int8), q), sx).mul_(scale)
        return out.view(*x.shape[:-1], -1)
    return call


async def main(kind: str) -> None:
    calls = load_workload()
    reqs = requests(calls)
    cache_dir = Path(os.environ.get("DEEPRESEARCH_CACHE_DIR") or Path.home() / ".cache" / "deepresearch")
    model = EmbeddedChatModel.load(embedded_model_dir(cache_dir), max_batch=8)  # as bench/model.py finds it
    embedded_products.JointProduct.__call__ = int8_call(kind)
    await replay(model, reqs[:2], 2)
    results = {}
    for int8 in (False, True):
        STATE["int8"] = int8
        await replay(model, reqs[:2], 2)  # int8: quantise the weights outside the measured pass
        for batch in (1, 8):
            model.clear_prefix_cache()
            results[int8, batch] = r = await replay(model, reqs, batch)
            print(f"{'int8 ' + kind if int8 else 'fp32'} batch {batch}: wall {r.wall_s:.1f} s, {r.tokens} tokens, "
                  f"{r.parsed_ok}/{len(calls)} parse", flush=True)
    for batch in (1, 8):
        diff = differences(calls, results[False, batch], results[True, batch])
        print(f"batch {batch}: same parsed output fp32 vs int8 {len(calls) - len(diff)}/{len(calls)}")
        print("\n".join(diff))
    await model.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=["fbgemm-dyn", "w8a8-int-mm"], required=True)
    asyncio.run(main(parser.parse_args().kind))
