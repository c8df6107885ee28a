"""Replay the 41 recorded agent calls at batch 1, then batch 8, with the engine of the snapshot on PYTHONPATH,
and write every completion's text and token ids; `--compare A B` counts the calls whose ids are equal.

    PYTHONPATH=/tmp/snap_old/pkg python -P same_tokens.py /tmp/snap_old old.json
    python same_tokens.py --compare old.json new.json
"""

import asyncio
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
MODEL = Path.home() / ".cache/deepresearch/models/SmolLM2-135M-Instruct"


async def dump(snapshot: str, out: str) -> None:
    sys.path.insert(0, f"{snapshot}/src/bench")
    from deepresearch.agent.model.embedded import EmbeddedChatModel
    from model_workload import load_workload, replay, requests

    reqs = requests(load_workload())
    model = EmbeddedChatModel.load(MODEL, max_batch=8, jump_forward="verified", prefix_cache=True, forward="lean")
    texts = {}
    for batch in (1, 8):
        result = await replay(model, reqs, batch)
        texts[batch] = [[c.text, list(c.completion_token_ids)] for c in result.completions]
        print(f"batch {batch}: {result.wall_s:.1f} s, {result.tokens} tokens")
    await model.close()
    Path(out).write_text(json.dumps(texts))


def compare(a: str, b: str) -> None:
    left, right = json.loads(Path(a).read_text()), json.loads(Path(b).read_text())
    for batch in left:
        same = sum(x[1] == y[1] for x, y in zip(left[batch], right[batch], strict=True))
        print(f"batch {batch}: {same}/{len(left[batch])} calls with the same token ids")


if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        asyncio.run(dump(sys.argv[1], sys.argv[2]))
