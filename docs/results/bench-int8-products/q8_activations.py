"""Would an int8 kernel for prefills (activations quantised in blocks of 32, symmetric int8, as llama.cpp's Q8_0
does, times the GGUF's own 4-bit weights) keep the engine's outputs? The activations of every product of more
than MIN rows (default 24: the products the GGUF blocks do not take) are quantised and dequantised before the
fp32 product, which is what such a kernel computes up to the order of its sums; bench/model.py's 41 recorded
agent calls are replayed at batch 8 without and with it in one process.

    .venv/bin/python docs/results/bench-int8-products/q8_activations.py [MIN]
"""
import asyncio
import os
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from deepresearch.agent.model import embedded_products
from deepresearch.agent.model.embedded import EmbeddedChatModel
from deepresearch.agent.model.embedded_weights import embedded_model_dir
from model_workload import differences, load_workload, replay, requests

CALL = embedded_products.JointProduct.__call__
STATE = {"q8": False}
MIN = int(sys.argv[1]) if len(sys.argv) > 1 else 24

def q8(x):
    shape = x.shape
    b = x.reshape(-1, 32)
    d = b.abs().amax(-1, keepdim=True) / 127
    q = torch.round(b / torch.where(d == 0, torch.ones_like(d), d)).clamp(-127, 127)
    return (q * d).reshape(shape)

def call(self, x, blocks=False):
    if STATE["q8"] and x.reshape(-1, x.shape[-1]).shape[0] > MIN:
        x = q8(x.contiguous())
    return CALL(self, x, blocks)

async def main():
    calls = load_workload()
    reqs = requests(calls)
    cache_dir = Path(os.environ.get("DEEPRESEARCH_CACHE_DIR") or Path.home() / ".cache" / "deepresearch")
    model = EmbeddedChatModel.load(embedded_model_dir(cache_dir), max_batch=8)
    embedded_products.JointProduct.__call__ = call
    await replay(model, reqs[:2], 2)
    res = {}
    for flag in (False, True):
        STATE["q8"] = flag
        model.clear_prefix_cache()
        res[flag] = r = await replay(model, reqs, 8)
        print(f"q8={flag}: wall {r.wall_s:.1f} tokens {r.tokens} parse {r.parsed_ok}", flush=True)
    diff = differences(calls, res[False], res[True])
    print(f"same {len(calls) - len(diff)}/{len(calls)}")
    print("\n".join(diff))
    await model.close()


if __name__ == "__main__":
    asyncio.run(main())
