"""Two prefill variants of the lean forward, each against the engine as it is, on the 41 recorded agent calls.

    .venv/bin/python docs/results/bench-prefill-zen4/prefill_variants.py bf16 --order old,new,old,new
    .venv/bin/python docs/results/bench-prefill-zen4/prefill_variants.py attention2 --order old,new,old,new
    .venv/bin/python docs/results/bench-prefill-zen4/prefill_variants.py bf16 --prefill-only   # 8 extractor prefills

In this process only, "new" switches on:
- bf16:       a layer product of >= MIN_ROWS rows (prefill, long drafts) in bf16 through torch (oneDNN), on every
              core, from a bf16 copy of the column-major weight (made once, again when the weight changes); fp32 out.
- attention2: attention of a step feeding >= MIN_ROWS columns on every core (the lean pass keeps torch on one).
One engine (jump-forward verified, prefix cache on) replays the workload at batch 1 and batch 8 in the order
given, then says for how many calls "old" and "new" give the same parsed output.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))  # model_workload.py

import deepresearch.agent.model.embedded_forward as forward  # noqa: E402
import deepresearch.agent.model.embedded_products as products  # noqa: E402
import torch  # noqa: E402
from deepresearch.agent.model.embedded import EmbeddedChatModel  # noqa: E402
from deepresearch.agent.model.embedded_weights import embedded_model_dir  # noqa: E402
from deepresearch.agent.model.types import Sampling  # noqa: E402
from deepresearch.app.settings import load_settings  # noqa: E402
from model_workload import load_workload, print_comparison, replay, requests, role_of  # noqa: E402

MIN_ROWS = 32
CORES = len(os.sched_getaffinity(0))
NEW = {"on": False}


def on_every_core(fn: Any, *args: Any) -> Any:
    threads = torch.get_num_threads()
    torch.set_num_threads(CORES)
    try:
        return fn(*args)
    finally:
        torch.set_num_threads(threads)


def patch_bf16() -> None:
    plain = products.matmul_t
    copies: dict[tuple[int, tuple[int, ...], int], torch.Tensor] = {}

    def matmul_t(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, x.shape[-1])
        if not NEW["on"] or len(rows) < MIN_ROWS:
            return plain(x, weight)
        columns = weight.detach().t()  # [in, out], contiguous on the column-major layout
        key = (columns.data_ptr(), tuple(columns.shape), columns._version)
        if key not in copies:
            copies[key] = columns.to(torch.bfloat16)
        out = on_every_core(torch.matmul, rows.to(torch.bfloat16), copies[key]).float()
        return out.view(*x.shape[:-1], weight.shape[0])

    products.matmul_t = matmul_t


def patch_attention2() -> None:
    plain = forward.biased_attention

    def biased_attention(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, bias: Any) -> torch.Tensor:
        if not NEW["on"] or q.shape[2] < MIN_ROWS:
            return plain(q, keys, values, bias)
        return on_every_core(plain, q, keys, values, bias)

    forward.biased_attention = biased_attention


async def main(args: argparse.Namespace) -> None:
    {"bf16": patch_bf16, "attention2": patch_attention2}[args.variant]()
    calls = load_workload()
    reqs = requests(calls)
    model = EmbeddedChatModel.load(embedded_model_dir(load_settings().cache_dir), max_batch=8,
                                   jump_forward="verified")
    await replay(model, reqs[:2], 2)  # first-call costs
    if args.prefill_only:  # prefill time of 8 extractor calls (one token each), alternately
        first = [r.model_copy(update={"sampling": Sampling(temperature=0.0, max_tokens=1)})
                 for r, c in zip(reqs, calls, strict=True) if role_of(c["messages"]) == "extractor"][:8]
        for mode in args.order.split(","):
            NEW["on"] = mode == "new"
            r = await replay(model, first, 1)
            print(f"{mode}: 8 extractor prefills {r.wall_s:.2f} s ({r.prompt_tokens} prompt tokens)", flush=True)
        await model.close()
        return
    runs: dict[str, Any] = {}
    for mode in args.order.split(","):
        NEW["on"] = mode == "new"
        model.clear_prefix_cache()  # each mode computes its own system-message keys/values
        await replay(model, reqs[:1], 1)
        for batch in (1, 8):
            r = await replay(model, reqs, batch)
            runs.setdefault(f"{mode}@{batch}", r)
            print(f"{mode} batch {batch}: {r.wall_s:.1f} s, prefill {r.prefill_s:.1f} s, {r.tokens} tokens, "
                  f"{r.parsed_ok}/{len(r.completions)} parse", flush=True)
    for batch in (1, 8):
        print_comparison(calls, runs[f"old@{batch}"], runs[f"new@{batch}"], f"old vs new, batch {batch}")
    await model.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variant", choices=["bf16", "attention2"])
    parser.add_argument("--order", default="old,new,old,new")
    parser.add_argument("--prefill-only", action="store_true")
    asyncio.run(main(parser.parse_args()))
