"""One of session 50's engine changes off and on, alternately in one process, on the 41 recorded agent calls
(bench/agent_calls.jsonl).

    .venv/bin/python docs/results/bench-cheaper-steps/ab.py --change few --rounds 2

`few`: forced drafts' columns projected on the tokens the grammar allows (embedded_logits.py) or on every token.
(Measured with this script and not kept: `rows`, a decode step's per-row attention calls shared with the
split-attention helper, at commit 056ebcd, ab-rows-log.txt; `mlp`, a long step's SiLU(gate)·up in bf16 between
its two bf16 products, at commit 39acb71, ab-mlp-log.txt.) One embedded engine with the settings' defaults; each
round replays the workload at batch 1 and at batch 8 with the change off, then on (machine drift hits both
alike), and the calls whose parsed output differs between off and on are listed.
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
from model_workload import load_workload, print_comparison, replay, requests  # noqa: E402


def switch(change: str, model: EmbeddedChatModel, on: bool) -> None:
    if change == "few":
        model._engine.few_choice_logits = on


async def main(args: argparse.Namespace) -> None:
    calls = load_workload()
    reqs = requests(calls)
    settings = load_settings()
    model = EmbeddedChatModel.load(embedded_model_dir(settings.cache_dir), max_batch=8,
                                   bf16_products=settings.model.bf16_products)
    await replay(model, reqs[:2], 2)  # first-call costs
    first: dict[str, object] = {}
    for _ in range(args.rounds):
        for on in (False, True):
            switch(args.change, model, on)
            model.clear_prefix_cache(system=False)
            for batch in (1, 8):
                result = await replay(model, reqs, batch)
                first.setdefault(f"{on}@{batch}", result)
                print(f"{args.change} {'on' if on else 'off'}, batch {batch}: {result.wall_s:.1f} s, prefill "
                      f"{result.prefill_s:.1f} s, {result.tokens} tokens, {result.parsed_ok}/{len(calls)} parse",
                      flush=True)
    for batch in (1, 8):
        print_comparison(calls, first[f"False@{batch}"], first[f"True@{batch}"],
                         f"{args.change} off vs on, batch {batch}")
    await model.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--change", choices=["few"], required=True)
    parser.add_argument("--rounds", type=int, default=2)
    asyncio.run(main(parser.parse_args()))
