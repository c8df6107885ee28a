"""Where the batch-8 replay of the 41 recorded agent calls spends its time, and how many token columns each
phase pushes through the 30 layers' products (session 30, issue 14).

Run from the repository root: `.venv/bin/python docs/results/bench-batch8-flops/phases.py [--batch 8] [--bf16 on]`.
Wraps the engine's admission (prefill) and decode step with timers and a profiler, replays the workload once
after the same warm-up as bench/model.py, and prints per phase: wall, forward passes, real token columns fed
(padding excluded: the lean forward packs it away), time in the OpenBLAS products and in SDPA, and the
products' rate in GFLOP/s from 2 × (non-embedding weights) FLOPs per token column.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import cProfile
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))

from deepresearch.agent.model import embedded_engine  # noqa: E402
from deepresearch.agent.model.embedded import EmbeddedChatModel  # noqa: E402
from deepresearch.agent.model.embedded_weights import embedded_model_dir  # noqa: E402
from deepresearch.app.settings import load_settings  # noqa: E402
from model_workload import load_workload, replay, requests  # noqa: E402

Engine = embedded_engine.BatchingEngine
wall: collections.Counter[str] = collections.Counter()
passes: collections.Counter[str] = collections.Counter()
columns: collections.Counter[str] = collections.Counter()
profiles = {"admit": cProfile.Profile(), "decode": cProfile.Profile()}
phase: list[str | None] = [None]
measuring = [False]


def timed(name: str, method):
    def wrapper(self, *args, **kwargs):
        if not measuring[0]:
            return method(self, *args, **kwargs)
        phase[0] = name
        start = time.perf_counter()
        profiles[name].enable()
        try:
            return method(self, *args, **kwargs)
        finally:
            profiles[name].disable()
            wall[name] += time.perf_counter() - start
            phase[0] = None
    return wrapper


feed = Engine._feed


def counted_feed(self, kv, rows, feeds):
    if measuring[0] and phase[0]:
        passes[phase[0]] += 1
        columns[phase[0]] += sum(map(len, feeds))
    return feed(self, kv, rows, feeds)


prefill_alone = Engine._prefill_alone


def counted_prefill_alone(self, ids, adapter):  # a system-message prefix computed on a miss
    if measuring[0] and phase[0]:
        passes[phase[0]] += 1
        columns[phase[0]] += len(ids)
    return prefill_alone(self, ids, adapter)


Engine._feed = counted_feed
Engine._prefill_alone = counted_prefill_alone
Engine._admit = timed("admit", Engine._admit)
Engine._decode_step = timed("decode", Engine._decode_step)


def seconds_in(profile: cProfile.Profile, name: str, cumulative: bool = False) -> float:
    """Time in functions named like `name`: their own (numpy's products count there), or with what they call
    (`cumulative`: torch's bf16 matmul is a profiled built-in of its own)."""
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    return sum(entry[3 if cumulative else 2] for (_, _, function), entry in stats.items() if name in function)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--bf16", choices=["off", "on"], default="off", help="bf16 products (session 49)")
    args = parser.parse_args()
    model_dir = embedded_model_dir(load_settings().cache_dir)  # where `deepresearch` keeps the converted model
    model = EmbeddedChatModel.load(model_dir, max_batch=8, bf16_products=args.bf16)
    weights = model._engine.forward.lean._model  # the decoder layers: products per token column
    flops_per_column = 2 * sum(p.numel() for n, p in weights.named_parameters()
                               if "embed_tokens" not in n and "norm" not in n)
    reqs = requests(load_workload())
    await replay(model, reqs[:2], 2)  # first-call costs, as bench/model.py
    model.clear_prefix_cache()
    measuring[0] = True
    result = await replay(model, reqs, args.batch)
    measuring[0] = False
    await model.close()
    print(f"batch {args.batch}: wall {result.wall_s:.1f} s, {result.tokens} emitted tokens, "
          f"{result.prompt_tokens} prompt tokens; {flops_per_column / 1e6:.0f} MFLOP of products per column")
    print(f"{'phase':8}{'wall s':>8}{'passes':>8}{'columns':>9}{'products s':>12}{'GFLOP/s':>9}{'SDPA s':>8}")
    for name, profile in profiles.items():
        products = seconds_in(profile, "matmul_t") + seconds_in(profile, "bf16_product", cumulative=True)
        rate = columns[name] * flops_per_column / products / 1e9 if products else 0.0
        print(f"{name:8}{wall[name]:8.1f}{passes[name]:8}{columns[name]:9}{products:12.1f}{rate:9.0f}"
              f"{seconds_in(profile, 'scaled_dot_product_attention'):8.1f}")


if __name__ == "__main__":
    asyncio.run(main())
