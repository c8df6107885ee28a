"""The lean forward's own products, fp32 (OpenBLAS under each weight's RowPlan) against the GGUF blocks
(gguf_products.c, one thread), summed over the 30 layers and timed apart for the vocabulary, by rows.

    OMP_WAIT_POLICY=PASSIVE .venv/bin/python docs/results/bench-gguf-products/products.py
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from functools import partial

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from deepresearch.agent.model.embedded_forward import LeanForward  # noqa: E402
from deepresearch.agent.model.embedded_gguf import packaged_blocks  # noqa: E402
from deepresearch.agent.model.embedded_llama import LlamaWeights  # noqa: E402
from deepresearch.agent.model.embedded_weights import embedded_model_dir  # noqa: E402
from deepresearch.app.settings import Settings  # noqa: E402

ROWS = (1, 2, 3, 4, 6, 8, 12, 16, 24)
REPEATS = 10


def timed(run: Callable[[], object]) -> float:
    run()
    started = time.perf_counter()
    for _ in range(REPEATS):
        run()
    return (time.perf_counter() - started) / REPEATS * 1e3


def main() -> None:
    model_dir = embedded_model_dir(Settings().cache_dir)
    weights = LlamaWeights.load(model_dir)
    weights.gguf_blocks = packaged_blocks(model_dir, weights.config, threads=int(sys.argv[1]) if sys.argv[1:] else 2)
    lean = LeanForward(weights)
    assert lean.blocks, "the blocks did not attach"
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    layers = [product for layer in lean._layers for product in layer[2:]]
    print("| rows | 30 layers fp32 ms | 30 layers blocks ms | vocabulary fp32 ms | vocabulary blocks ms |")
    print("|---|---|---|---|---|")
    def run_layers(inputs: dict[int, torch.Tensor], blocks: bool) -> None:
        for product in layers:
            product(inputs[product.weight().shape[1]], blocks)

    for rows in ROWS:
        inputs = {size: torch.from_numpy(rng.standard_normal((rows, size), dtype=np.float32)) for size in (576, 1536)}
        cells = [timed(partial(run_layers, inputs, False)), timed(partial(run_layers, inputs, True)),
                 timed(partial(lean._head, inputs[576], False)), timed(partial(lean._head, inputs[576], True))]
        print(f"| {rows} | " + " | ".join(f"{cell:.1f}" for cell in cells) + " |")


if __name__ == "__main__":
    main()
