"""The engine with and without its row plans, in one process, on the 41 recorded agent calls (session 38, issue 14).

    OMP_WAIT_POLICY=PASSIVE .venv/bin/python docs/results/bench-row-plans/workload.py --order old,new,old,new

"old" computes every product as before this session: one GEMV per row at 2-3 rows of a layer weight, one GEMM
otherwise (the vocabulary projection always). "new" is the engine as it is: gate/up per row up to 6 rows, the
vocabulary per row in blocks of 4,096 columns up to 12 (embedded_forward.py's GATE_UP_PLAN, VOCABULARY_PLAN).
One engine (jump-forward verified, prefix cache on) replays the workload at batch 1 and batch 8 in the order
given (the prompt cache cleared before each replay, as bench/model.py does), then says for how many calls
"old" and "new" give the same parsed output.
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
from deepresearch.agent.model.embedded_forward import GATE_UP_PLAN, VOCABULARY_PLAN  # noqa: E402
from deepresearch.agent.model.embedded_products import DEFAULT_PLAN, RowPlan  # noqa: E402
from deepresearch.agent.model.embedded_weights import embedded_model_dir  # noqa: E402
from model_workload import differences, load_workload, replay, requests  # noqa: E402

OLD_VOCABULARY = RowPlan(gemv_max_rows=1)  # before: no per-row GEMV for the 113 MB weight


def set_plans(model: EmbeddedChatModel, new: bool) -> None:
    lean = model._engine.forward.lean
    lean._head._plan = VOCABULARY_PLAN if new else OLD_VOCABULARY
    for _norm1, _norm2, _qkv, _o, gate_up, _down in lean._layers:
        gate_up._plan = GATE_UP_PLAN if new else DEFAULT_PLAN


async def main(order: list[str]) -> None:
    model_dir = embedded_model_dir(Path.home() / ".cache" / "deepresearch")
    calls = load_workload()
    reqs = requests(calls)
    model = EmbeddedChatModel.load(model_dir, max_batch=8)
    await replay(model, reqs[:2], 2)  # first-call costs (allocations, grammar compiles)
    results: dict[tuple[str, int], object] = {}
    for variant in order:
        set_plans(model, variant == "new")
        for batch in (1, 8):
            model.clear_prefix_cache(system=False)
            run = await replay(model, reqs, batch)
            results[(variant, batch)] = run
            print(f"{variant} batch {batch}: {run.wall_s:.1f} s (prefill {run.prefill_s:.1f}, "
                  f"decode {run.decode_s:.1f}), {run.tokens} tokens, {run.parsed_ok}/{len(reqs)} parse", flush=True)
    await model.close()
    for batch in (1, 8):
        diff = differences(calls, results[("old", batch)], results[("new", batch)])
        print(f"batch {batch}: same parsed output old vs new {len(calls) - len(diff)}/{len(calls)}")
        print("\n".join(diff))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--order", default="old,new,old,new")
    asyncio.run(main(parser.parse_args().order.split(",")))
