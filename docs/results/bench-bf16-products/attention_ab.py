"""bf16 attention for long steps on and off, alternately in one engine (bf16 products on), on the 41 agent calls.

    .venv/bin/python docs/results/bench-bf16-products/attention_ab.py --min-queries 1000000000,75 --rounds 3

`--min-queries` lists values of embedded_forward.BF16_MIN_QUERIES (an attention call with fewer query rows stays
SDPA's fp32; 1000000000 = never bf16); each round replays the workload at batch 1 and 8 for each value in turn,
then the calls whose parsed output differs between the first two values are listed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))  # model_workload.py

import deepresearch.agent.model.embedded_forward as forward  # noqa: E402
from deepresearch.agent.model.embedded import EmbeddedChatModel  # noqa: E402
from deepresearch.agent.model.embedded_weights import embedded_model_dir  # noqa: E402
from deepresearch.app.settings import load_settings  # noqa: E402
from model_workload import differences, load_workload, replay, requests  # noqa: E402


async def main(args: argparse.Namespace) -> None:
    calls = load_workload()
    reqs = requests(calls)
    model = EmbeddedChatModel.load(embedded_model_dir(load_settings().cache_dir), max_batch=8, bf16_products="on")
    await replay(model, reqs[:2], 2)  # first-call costs
    values = [int(v) for v in args.min_queries.split(",")]
    first: dict[tuple[int, int], object] = {}
    for _ in range(args.rounds):
        for value in values:
            forward.BF16_MIN_QUERIES = value  # read by every pass
            model.clear_prefix_cache()  # each value computes its own prefixes
            for batch in (1, 8):
                result = await replay(model, reqs, batch)
                first.setdefault((value, batch), result)
                print(f"min queries {value} batch {batch}: {result.wall_s:.1f} s, prefill {result.prefill_s:.1f} s, "
                      f"{result.tokens} tokens", flush=True)
    for batch in (1, 8):
        diff = differences(calls, first[(values[0], batch)], first[(values[1], batch)])
        print(f"batch {batch}: same parsed output: {len(calls) - len(diff)}/{len(calls)}")
        print("\n".join(diff))
    await model.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-queries", default="1000000000,75")
    parser.add_argument("--rounds", type=int, default=3)
    asyncio.run(main(parser.parse_args()))
