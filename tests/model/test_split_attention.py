"""A large attention call split over two threads gives the very numbers of the whole call; small calls, a busy
helper and a failed half are handled; the lean forward uses it on two threads with the same logits; importing the
package tells OpenBLAS not to spin on the second core."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from typing import Any

import pytest
import torch
from deepresearch.agent.model.embedded.engine.kv_batch import KVBatch, new_cache
from deepresearch.agent.model.embedded.layers.forward import LeanForward, grouped_bias
from deepresearch.agent.model.embedded.layers.split_attention import SPLIT_ATTENTION, SplitAttention, sdpa


def prefill(rows: int, fed: int, cached: int, masked: bool = True, seed: int = 0) -> tuple[torch.Tensor, ...]:
    """q [rows, 3 KV heads, 3·fed, 64] and keys/values over `cached` + `fed` columns, with the causal bias of
    `fed` new tokens (None: every key seen)."""
    gen = torch.Generator().manual_seed(seed)
    length = cached + fed
    q = torch.randn((rows, 3, 3 * fed, 64), generator=gen)
    keys, values = torch.randn((2, rows, 3, length, 64), generator=gen)
    visible = (torch.arange(length) <= torch.arange(cached, length)[:, None])[None, None].expand(rows, 1, fed, length)
    return q, keys, values, grouped_bias(visible, 3) if masked else None


@pytest.mark.parametrize(("rows", "fed", "cached", "masked"),
                         [(1, 280, 170, True), (1, 150, 60, True), (2, 300, 0, True), (1, 9, 900, False),
                          (3, 41, 500, True)])
def test_a_split_call_equals_the_whole_call_bit_for_bit(rows, fed, cached, masked):
    split = SplitAttention()
    q, keys, values, bias = prefill(rows, fed, cached, masked)
    assert torch.equal(split(q, keys, values, bias), sdpa(q, keys, values, bias))
    assert split.split_calls == 1


def test_a_small_call_is_not_split():
    split = SplitAttention()
    q, keys, values, bias = prefill(1, 5, 600)  # a drafted decode step: 15 query rows × 605 keys
    assert torch.equal(split(q, keys, values, bias), sdpa(q, keys, values, bias))
    assert split.split_calls == 0


def test_a_call_that_finds_the_helper_busy_computes_alone():
    split = SplitAttention()
    q, keys, values, bias = prefill(1, 200, 100)
    assert split._busy.acquire()  # another engine's call holds the helper
    try:
        assert torch.equal(split(q, keys, values, bias), sdpa(q, keys, values, bias))
    finally:
        split._busy.release()
    assert split.split_calls == 0
    split(q, keys, values, bias)
    assert split.split_calls == 1


def test_a_failed_call_raises_and_leaves_no_result_behind_for_the_next():
    split = SplitAttention()
    q, keys, values, bias = prefill(1, 200, 100)
    with pytest.raises(RuntimeError):
        split(q, keys, values, bias[..., :50])  # a bias of the wrong width: both halves fail
    other = prefill(1, 150, 60, seed=1)
    assert torch.equal(split(*other), sdpa(*other))


def _split_in_child(conn: Any) -> None:
    torch.set_num_threads(1)  # the parent's OpenMP pool does not survive a fork
    q, keys, values, bias = prefill(1, 200, 100)
    conn.send(torch.equal(SPLIT_ATTENTION(q, keys, values, bias), sdpa(q, keys, values, bias)))


def test_a_forked_child_splits_with_its_own_helper():
    q, keys, values, bias = prefill(1, 200, 100)
    SPLIT_ATTENTION(q, keys, values, bias)  # the parent's helper thread exists before the fork
    parent, child = multiprocessing.get_context("fork").Pipe()
    process = multiprocessing.get_context("fork").Process(target=_split_in_child, args=(child,))
    process.start()
    assert parent.poll(60) and parent.recv() is True
    process.join(10)
    assert process.exitcode == 0


def lean_prefill(lean: LeanForward, config: Any, ids: torch.Tensor) -> torch.Tensor:
    kv = KVBatch(new_cache(config.num_hidden_layers), torch.zeros((1, 0), dtype=torch.long),
                 torch.zeros(1, dtype=torch.long))
    mask, positions = kv.step_inputs([ids.shape[1]])
    return lean(ids, mask, positions, kv.cache, ids.shape[1])


@torch.inference_mode()
def test_the_lean_forward_splits_a_prefill_s_attention_on_two_threads_with_the_same_logits(hf_model):
    lean, before = LeanForward(hf_model), torch.get_num_threads()
    ids = torch.randint(10, 40_000, (1, 160), generator=torch.Generator().manual_seed(0))
    try:
        torch.set_num_threads(1)
        calls = SPLIT_ATTENTION.split_calls
        alone = lean_prefill(lean, hf_model.config, ids)
        assert SPLIT_ATTENTION.split_calls == calls
        torch.set_num_threads(2)
        split = lean_prefill(lean, hf_model.config, ids)
        assert SPLIT_ATTENTION.split_calls == calls + hf_model.config.num_hidden_layers
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    assert torch.equal(alone, split)


@pytest.mark.parametrize(("env", "expected"), [({}, "18"), ({"OPENBLAS_THREAD_TIMEOUT": "28"}, "28")])
def test_importing_the_package_sets_openblas_s_thread_timeout_unless_the_user_did(env, expected):
    clean = {key: value for key, value in os.environ.items() if key != "OPENBLAS_THREAD_TIMEOUT"}
    code = "import os, deepresearch; print(os.environ['OPENBLAS_THREAD_TIMEOUT'])"
    out = subprocess.run([sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == expected
