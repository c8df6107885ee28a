"""The lean forward's prefill (240 tokens over a 200-token cache) and decode steps (1, 4, 8 rows over 600
columns), ms, min and median; run it under different OpenMP settings, one process each:

    cd docs/results/bench-compiled-kernels
    OMP_WAIT_POLICY=PASSIVE ../../../.venv/bin/python omp_wait.py passive
    OMP_WAIT_POLICY=PASSIVE GOMP_SPINCOUNT=10000 ../../../.venv/bin/python omp_wait.py spin10k
    TORCH_THREADS=1 OMP_WAIT_POLICY=PASSIVE ../../../.venv/bin/python omp_wait.py torch-1-thread

(The engine sets OMP_WAIT_POLICY=PASSIVE itself, agent/model/embedded.py; an explicit GOMP_SPINCOUNT overrides
it in libgomp.)
"""

import os
import sys
import time

import torch
from deepresearch.agent.model.embedded_batch import new_cache
from deepresearch.agent.model.embedded_forward import LeanForward
from deepresearch.agent.model.embedded_llama import LlamaWeights
from deepresearch.agent.model.embedded_weights import embedded_model_dir
from deepresearch.app.settings import load_settings


def feed(forward: LeanForward, cache, ids: torch.Tensor, start: int) -> float:
    rows, fed = ids.shape
    started = time.perf_counter()
    forward(ids, torch.ones(rows, start + fed, dtype=torch.long), torch.arange(start, start + fed).repeat(rows, 1),
            cache)
    return time.perf_counter() - started


def main(label: str) -> None:
    torch.set_num_threads(int(os.environ.get("TORCH_THREADS", "2")))
    forward = LeanForward(LlamaWeights.load(embedded_model_dir(load_settings().cache_dir)))
    torch.manual_seed(0)
    cells = []
    with torch.inference_mode():
        prefills = []
        for _ in range(9):
            cache = new_cache(30)
            feed(forward, cache, torch.randint(100, 40000, (1, 200)), 0)
            prefills.append(feed(forward, cache, torch.randint(100, 40000, (1, 240)), 200))
        prefills = sorted(prefills[2:])
        cells.append(f"prefill 240: min {prefills[0] * 1e3:.0f} median {prefills[3] * 1e3:.0f}")
        for rows in (1, 4, 8):
            cache = new_cache(30)
            feed(forward, cache, torch.randint(100, 40000, (rows, 600)), 0)
            steps = sorted(feed(forward, cache, torch.randint(100, 40000, (rows, 1)), 600 + step) for step in range(20))
            cells.append(f"step {rows}: min {steps[0] * 1e3:.1f} median {steps[10] * 1e3:.1f}")
    print(label, " | ".join(cells), flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
