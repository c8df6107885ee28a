"""Decode-step time of the lean forward at 1, 4 and 8 rows over a 600-column cache: min and median of 30
steps, for the code importable as `deepresearch` (run it once per snapshot, alternately).

    PYTHONPATH=SNAPSHOT/pkg .venv/bin/python -P docs/results/bench-vocab-column-major/step.py MODEL_DIR
"""

import sys
import time

import torch
from deepresearch.agent.model.embedded_batch import new_cache
from deepresearch.agent.model.embedded_forward import LeanForward
from deepresearch.agent.model.embedded_llama import LlamaWeights


def main(model_dir: str) -> None:
    torch.set_num_threads(2)
    forward = LeanForward(LlamaWeights.load(model_dir))
    torch.manual_seed(0)
    for rows, length in ((1, 600), (4, 600), (8, 600)):
        cache = new_cache(30)
        ids = torch.randint(100, 40000, (rows, length))
        times = []
        with torch.inference_mode():
            forward(ids, torch.ones(rows, length, dtype=torch.long), torch.arange(length).repeat(rows, 1), cache)
            for step in range(30):
                columns = length + step + 1
                started = time.perf_counter()
                forward(torch.randint(100, 40000, (rows, 1)), torch.ones(rows, columns, dtype=torch.long),
                        torch.full((rows, 1), columns - 1), cache)
                times.append(time.perf_counter() - started)
        times.sort()
        print(f"rows {rows}: step min {times[0] * 1000:.1f} median {times[15] * 1000:.1f} ms", end=" ")
    print()


if __name__ == "__main__":
    main(sys.argv[1])
