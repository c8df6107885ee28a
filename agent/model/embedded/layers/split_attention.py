"""A large attention call of the lean forward, computed on both cores.

The lean pass runs torch's ops on one thread (forward.py): for the small tensors of a decode step,
waking OpenMP's second thread cost more than it gained. A prefill's attention is the exception: at 280 new
tokens after 170 cached, one layer's SDPA takes 3.8 ms on one thread and 2.6 ms split over two. So a call of
at least `SPLIT_MIN_PAIRS` query-key pairs hands part of its work to a helper thread of ours while the caller
computes the rest: half of its rows (sequences), or for a single row one of its three KV heads.

SDPA computes each row and head on its own, so the parts put together equal the whole call bit for bit
(tested); nothing the engine outputs or caches changes. Splitting a head's query rows instead would balance
better (2.2 ms above) but is not exact: SDPA tiles query rows in blocks whose size depends on their number,
and a row's sums then round differently (~2e-7). It pays only when the second core is free when the
call starts; OpenBLAS's idle threads spin on it for ~0.1 s after every product unless
OPENBLAS_THREAD_TIMEOUT says otherwise, which the package sets when it is imported (deepresearch/__init__.py).
dev/results/bench-split-attention/ has the measurements.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable

import torch
import torch.nn.functional as F

# Query-key pairs (rows × query rows × keys) from which a call is split. Measured on this Zen 4, µs whole → split:
# a batch-8 decode step over 600 keys (14k pairs) 520 → 597; 4 rows × 4 drafted tokens (29k) 390 → 290; a 64-token
# prefill after 400 (89k) 877 → 631; 280 after 170 (378k) 3,777 → 2,571.
SPLIT_MIN_PAIRS = 20_000


def sdpa(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    return F.scaled_dot_product_attention(q, keys, values, attn_mask=bias)


Job = Callable[[], torch.Tensor]


class SplitAttention:
    """SDPA of q [rows, kv heads, query rows, dim] over keys/values [rows, kv heads, length, dim] with an
    additive `bias` [rows, 1, query rows, length] (or None), the rows (or heads) of a large call split between
    the caller, which takes the larger part, and one helper thread. One call at a time uses the helper; a call
    that finds it busy (another engine in the process) computes alone. A forked child starts its own helper when
    it first needs one."""

    def __init__(self, min_pairs: int = SPLIT_MIN_PAIRS) -> None:
        self.min_pairs = min_pairs
        self._reset()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._busy = threading.Lock()
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self._results: queue.SimpleQueue[tuple[torch.Tensor | None, BaseException | None]] = queue.SimpleQueue()
        self._helper: threading.Thread | None = None
        self.split_calls = 0

    def _serve(self) -> None:
        torch.set_num_threads(1)  # this thread's own OpenMP setting: it is the second core
        while True:
            job = self._jobs.get()
            try:
                self._results.put((job(), None))
            except BaseException as exc:  # handed to the caller, which raises it
                self._results.put((None, exc))

    def __call__(self, q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                 bias: torch.Tensor | None) -> torch.Tensor:
        rows, kv_heads, query_rows, _ = q.shape
        small = rows * kv_heads < 2 or rows * query_rows * keys.shape[2] < self.min_pairs
        if small or not self._busy.acquire(blocking=False):
            return sdpa(q, keys, values, bias)
        dim = 0 if rows > 1 else 1  # rows (the bias has one per row), else heads (the bias is shared by them)
        size = q.shape[dim]
        mine = (size + 1) // 2

        def part(start: int, length: int) -> torch.Tensor:
            sliced = [t.narrow(dim, start, length) for t in (q, keys, values)]
            return sdpa(*sliced, bias.narrow(0, start, length) if bias is not None and dim == 0 else bias)

        try:
            if self._helper is None:
                self._helper = threading.Thread(target=self._serve, name="split-attention", daemon=True)
                self._helper.start()
            self._jobs.put(lambda: part(mine, size - mine))
            try:
                first = part(0, mine)
            finally:  # the helper's result is taken even if ours failed, so the next call does not read it
                second, error = self._results.get()
            if error is not None:
                raise error
            self.split_calls += 1
            return torch.cat((first, second), dim=dim)
        finally:
            self._busy.release()


SPLIT_ATTENTION = SplitAttention()  # one helper thread per process, shared by its engines
