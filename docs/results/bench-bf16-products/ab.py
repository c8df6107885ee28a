"""bf16 products off and on, alternately in one process, on the 41 recorded agent calls (bench/agent_calls.jsonl).

    .venv/bin/python docs/results/bench-bf16-products/ab.py --rounds 2 --modes off,on

One embedded engine per mode (`bf16_products`, embedded_bf16.py), both loaded before any replay; each round replays
the workload at batch 1 and at batch 8 on every engine in turn (machine noise hits both alike), then the calls whose
parsed output differs between the first two modes are listed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))  # model_workload.py

from deepresearch.agent.model.embedded import EmbeddedChatModel  # noqa: E402
from deepresearch.agent.model.embedded_weights import embedded_model_dir  # noqa: E402
from deepresearch.app.settings import load_settings  # noqa: E402
from model_workload import differences, load_workload, replay, requests  # noqa: E402


async def main(args: argparse.Namespace) -> None:
    calls = load_workload()
    reqs = requests(calls)
    model_dir = embedded_model_dir(load_settings().cache_dir)
    modes = args.modes.split(",")
    models = {mode: EmbeddedChatModel.load(model_dir, max_batch=8, bf16_products=mode) for mode in modes}
    for model in models.values():
        await replay(model, reqs[:2], 2)  # first-call costs
    first: dict[str, object] = {}
    for _ in range(args.rounds):
        for mode, model in models.items():
            model.clear_prefix_cache(system=False)
            for batch in (1, 8):
                result = await replay(model, reqs, batch)
                first.setdefault(f"{mode}@{batch}", result)
                print(f"{mode} batch {batch}: {result.wall_s:.1f} s, prefill {result.prefill_s:.1f} s, "
                      f"{result.tokens} tokens, {result.parsed_ok}/{len(result.completions)} parse", flush=True)
    if len(modes) > 1:
        for batch in (1, 8):
            diff = differences(calls, first[f"{modes[0]}@{batch}"], first[f"{modes[1]}@{batch}"])
            print(f"batch {batch}: same parsed output, {modes[0]} vs {modes[1]}: {len(calls) - len(diff)}/{len(calls)}")
            print("\n".join(diff))
    for model in models.values():
        await model.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--modes", default="off,on")
    asyncio.run(main(parser.parse_args()))
