"""The experiment before the change: the 41 agent calls at batch 1 then 8, with torch's threads in the engine's
worker set per MODE. plain = as the engine was (2 on this machine); t1 = 1 for everything the worker does;
t1att = 1, but 2 around each attention call. Writes each call's token ids to ids-MODE.json in the current folder.

    OMP_WAIT_POLICY=PASSIVE .venv/bin/python docs/results/bench-torch-one-thread/worker_threads.py t1
"""

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

import torch  # noqa: E402
from deepresearch.agent.model import embedded_forward  # noqa: E402
from deepresearch.agent.model.embedded import EmbeddedChatModel  # noqa: E402
from deepresearch.agent.model.embedded_weights import embedded_model_dir  # noqa: E402
from deepresearch.app.settings import load_settings  # noqa: E402
from model_workload import load_workload, replay, requests  # noqa: E402


def attention_on_two_threads() -> None:
    inner = embedded_forward.biased_attention

    def wrapped(*args: Any) -> torch.Tensor:
        torch.set_num_threads(2)
        try:
            return inner(*args)
        finally:
            torch.set_num_threads(1)

    embedded_forward.biased_attention = wrapped


async def main(mode: str) -> None:
    if mode == "t1att":
        attention_on_two_threads()
    reqs = requests(load_workload())
    model = EmbeddedChatModel.load(embedded_model_dir(load_settings().cache_dir), max_batch=8,
                                   jump_forward="verified", prefix_cache=True, forward="lean")
    if mode != "plain":
        model._engine.call(lambda: torch.set_num_threads(1)).result()
    ids = {}
    for batch in (1, 8):
        result = await replay(model, reqs, batch)
        ids[batch] = [list(c.completion_token_ids) for c in result.completions]
        print(f"{mode} batch {batch}: {result.wall_s:.1f} s, {sum(map(len, ids[batch]))} tokens", flush=True)
    await model.close()
    Path(f"ids-{mode}.json").write_text(json.dumps(ids))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
