"""Where batch-1 decoding spends its time: each decode step of the 41 recorded agent calls, by the length of the
draft it checks (session 38, issue 14).

    OMP_WAIT_POLICY=PASSIVE .venv/bin/python docs/results/bench-row-plans/steps.py [--old]

A step that checks a draft of k tokens feeds k + 1 columns and needs the logits of all of them. In this process
only, the engine's decode step and forward are wrapped to time them; prints steps, tokens gained, ms per step
(and of its forward pass) for each draft length (10 = 10-19, 20 = 20-39, 40 = 40 or more). --old: the products as
before this session's row plans (workload.py's "old").
"""

from __future__ import annotations

import asyncio
import collections
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))  # model_workload.py
sys.path.insert(0, str(Path(__file__).resolve().parent))  # workload.py

from deepresearch.agent.model import embedded_engine  # noqa: E402
from deepresearch.agent.model.embedded import EmbeddedChatModel  # noqa: E402
from deepresearch.agent.model.embedded_weights import embedded_model_dir  # noqa: E402
from model_workload import load_workload, replay, requests  # noqa: E402
from workload import set_plans  # noqa: E402

STEPS: list[tuple[int, int, float, float]] = []  # draft length, tokens gained, step s, forward s
FORWARD_S: list[float] = []
engine = embedded_engine.BatchingEngine
plain_step, plain_feed = engine._decode_step, engine._feed


def timed_feed(self, *args):
    started = time.perf_counter()
    out = plain_feed(self, *args)
    FORWARD_S.append(time.perf_counter() - started)
    return out


def timed_step(self) -> None:
    row = self._rows[0]
    draft, before = len(row.draft), len(row.token_ids)
    started = time.perf_counter()
    plain_step(self)
    STEPS.append((draft, len(row.token_ids) - before, time.perf_counter() - started, FORWARD_S[-1]))


async def main(old: bool) -> None:
    engine._feed, engine._decode_step = timed_feed, timed_step
    model = EmbeddedChatModel.load(embedded_model_dir(Path.home() / ".cache" / "deepresearch"), max_batch=8)
    set_plans(model, new=not old)
    reqs = requests(load_workload())
    await replay(model, reqs[:2], 2)
    model.clear_prefix_cache()
    STEPS.clear()
    run = await replay(model, reqs, 1)
    await model.close()
    print(f"batch 1: wall {run.wall_s:.1f} s, prefill {run.prefill_s:.1f} s, decode {run.decode_s:.1f} s, "
          f"{len(STEPS)} decode steps")
    groups: dict[int, list[float]] = collections.defaultdict(lambda: [0, 0, 0.0, 0.0])
    for draft, gained, step_s, forward_s in STEPS:
        group = groups[draft if draft < 10 else 10 if draft < 20 else 20 if draft < 40 else 40]
        group[0] += 1
        group[1] += gained
        group[2] += step_s
        group[3] += forward_s
    print(f"{'draft':>6} {'steps':>6} {'tokens':>7} {'s':>6} {'ms/step':>8} {'forward ms':>11}")
    for draft in sorted(groups):
        steps, gained, step_s, forward_s = groups[draft]
        per_step, forward_per_step = 1e3 * step_s / steps, 1e3 * forward_s / steps
        print(f"{draft:6d} {steps:6d} {gained:7d} {step_s:6.2f} {per_step:8.1f} {forward_per_step:11.1f}")


if __name__ == "__main__":
    asyncio.run(main("--old" in sys.argv[1:]))
