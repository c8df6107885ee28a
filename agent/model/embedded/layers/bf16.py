"""bf16 for the lean forward's long steps (prefills, long drafts), where the CPU computes it faster.

A prefill pushes hundreds of token columns through every layer: it is bound by arithmetic, not by reading
the weights (dev/results/bench-batch8-flops/). A CPU with bf16 dot products (AVX512-BF16, AMX) does twice the
arithmetic per instruction in bf16, and torch's oneDNN uses them: on the AMD Zen 5 of session 49, ~930
GFLOP/s for a 400-row product against ~420 for OpenBLAS's fp32 (AVX-512 kernel) and ~250 for its AVX2
one. Elsewhere oneDNN's bf16 can be slower than fp32 (the Intel Xeon of session 25), so "auto" measures it.

Such a step's layer products (`bf16_product`) and attention (`Bf16Attention`) round their inputs and outputs to
bf16 (8 bits of mantissa), so its keys and values differ from fp32's by ~1e-2 relative: 2 of the 41 recorded
agent calls changed (degenerate search strings), none of the 100 pool dev questions' answers
(dev/results/bench-bf16-products/). The vocabulary projection, which makes the logits, stays fp32, and so do
steps of up to 24 rows (plain decoding). The trainer computes its log-probabilities in fp32 whatever the engine
does; the importance weight absorbs the difference, as it does for vLLM.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import torch

from ..config import Bf16Products
from ..disk_store import replace_atomically

log = logging.getLogger(__name__)

PROBE_SHAPE = (256, 576, 1536)  # rows × in × out: a prefill's q/k/v product of the 135M model
PROBE_CALLS = 8
# bf16 is chosen when the probe's product takes at most this share of fp32's time: a clear win, not noise,
# since it also changes outputs a little.
PROBE_MAX_SHARE = 0.67
PROBE_FILE = "bf16-probe.json"


@contextlib.contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """torch's threads (this thread's OpenMP setting) set to `threads` inside the block, restored after it."""
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def bf16_product(rows: torch.Tensor, columns: torch.Tensor, threads: int) -> torch.Tensor:
    """rows [n, in] (fp32) @ columns [in, out] (bf16) on `threads` of torch's threads; fp32 out."""
    with torch_threads(threads):  # the lean pass keeps torch on one thread; oneDNN's GEMM wants every core
        return torch.matmul(rows.to(torch.bfloat16), columns).float()


class Bf16Attention:
    """Attention of a long step (at least `min_queries` query rows: a prefill, a long draft) as two bf16 products
    around a softmax computed in fp32 from and to bf16, on `threads` threads; shorter calls go to `fallback`
    (SDPA, fp32). Arguments as SDPA's: q [rows, kv heads, query rows, dim], keys/values [rows, kv heads, length,
    dim], an additive bias [rows, 1, query rows, length] or None. Made for one forward pass: it keeps a bf16 copy
    of each bias, which every layer shares.
    The scores are bf16 products either way, so scaling q first (by 1/8 for 64 dims: exact) and adding a bias of
    0 and -inf in bf16 change nothing; the softmax reads and writes bf16 but computes in fp32. That is the output
    of scores turned to fp32, scaled, masked and softmaxed there (bit for bit in two of three prefill shapes, 9 of
    154k outputs a bf16 step apart in the third), with four fewer passes over the scores: 268 tokens after 432,
    one layer, 6.5 → 1.4 ms (5e-3 from SDPA's output either way; dev/results/bench-cheaper-steps/, AMD Zen 5)."""

    def __init__(self, fallback: Callable[..., torch.Tensor], threads: int, min_queries: int) -> None:
        self.fallback, self.threads, self.min_queries = fallback, threads, min_queries
        self._biases: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}  # id → (the fp32 bias, its bf16 copy)

    def __call__(self, q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                 bias: torch.Tensor | None) -> torch.Tensor:
        if q.shape[2] < self.min_queries:
            return self.fallback(q, keys, values, bias)
        with torch_threads(self.threads):
            scaled = (q * q.shape[-1] ** -0.5).to(torch.bfloat16)
            scores = torch.matmul(scaled, keys.to(torch.bfloat16).transpose(-1, -2))
            if bias is not None:
                scores += self._bf16_bias(bias)
            return torch.matmul(torch.softmax(scores, dim=-1), values.to(torch.bfloat16)).float()

    def _bf16_bias(self, bias: torch.Tensor) -> torch.Tensor:
        kept = self._biases.get(id(bias))
        if kept is None or kept[0] is not bias:
            kept = (bias, bias.to(torch.bfloat16))
            self._biases[id(bias)] = kept
        return kept[1]


def seconds_per_call(fn: Callable[[], object], calls: int) -> float:
    """Mean seconds of `calls` calls of `fn`, after two untimed ones (first-call costs)."""
    fn()
    fn()
    started = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - started) / calls


def probe(threads: int) -> dict[str, float]:
    """Seconds per call of the probe product in fp32 (OpenBLAS on a column-major weight, as the lean forward
    computes it) and in bf16 (oneDNN), each the best of two rounds."""
    n, inputs, outputs = PROBE_SHAPE
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(n, inputs, generator=generator)
    weight = torch.randn(inputs, outputs, generator=generator)  # [in, out] contiguous = column-major Wᵀ
    x_np, w_np = x.numpy(), weight.numpy()
    columns = weight.to(torch.bfloat16)
    fp32 = min(seconds_per_call(lambda: np.matmul(x_np, w_np), PROBE_CALLS) for _ in range(2))
    bf16 = min(seconds_per_call(lambda: bf16_product(x, columns, threads), PROBE_CALLS) for _ in range(2))
    return {"fp32_s": fp32, "bf16_s": bf16}


def _identity(threads: int) -> str:
    """What the probe's outcome depends on: the CPU, the libraries, OpenBLAS's kernel choice, the threads."""
    cpu: dict[str, str] = {}  # the first CPU's model name and flags
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key = line.split(":", 1)[0].strip()
            if key in ("model name", "flags"):
                cpu.setdefault(key, line)
    parts = [*cpu.values(), torch.__version__, np.__version__, os.environ.get("OPENBLAS_CORETYPE", ""), str(threads)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def use_bf16(setting: Bf16Products, threads: int, store_dir: Path | None = None) -> bool:
    """Whether the lean forward's long products run in bf16: "on", "off", or for "auto" the probe's verdict."""
    if setting != "auto":
        return setting == "on"
    return probe_verdict(threads, store_dir)[0]


def probe_verdict(threads: int, store_dir: Path | None = None) -> tuple[bool, dict[str, float]]:
    """Whether bf16 is clearly faster than fp32 on this CPU, and the probe's timings. The probe runs once; its
    verdict is kept in `store_dir` (keyed by CPU, libraries and threads), so later starts decide alike."""
    identity = _identity(threads)
    path = Path(store_dir) / PROBE_FILE if store_dir is not None else None
    if path is not None:
        try:
            kept = json.loads(path.read_text())
            if kept.get("identity") == identity:
                return bool(kept["bf16"]), {"fp32_s": float(kept["fp32_s"]), "bf16_s": float(kept["bf16_s"])}
        except (OSError, ValueError, KeyError, TypeError):
            pass
    timings = probe(threads)
    verdict = timings["bf16_s"] <= PROBE_MAX_SHARE * timings["fp32_s"]
    log.info("bf16 products probe: fp32 %.2f ms, bf16 %.2f ms -> %s", timings["fp32_s"] * 1e3,
             timings["bf16_s"] * 1e3, "bf16" if verdict else "fp32")
    if path is not None:
        record = json.dumps({"identity": identity, "bf16": verdict, **timings})
        try:
            replace_atomically(path, lambda target: Path(target).write_text(record))
        except OSError as exc:  # a read-only model directory: probe again next time
            log.debug("cannot keep the bf16 probe in %s: %s", path, exc)
    return verdict, timings
