"""The lean forward (OpenBLAS products) against transformers' own, with the real SmolLM2-135M: the same
logits through a left-padded prefill, a ragged jump-forward step with holes and plain decoding; the same
with a merged adapter; and the same completions through the engine."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from deepresearch.agent.model.embedded.engine.kv_batch import KVBatch, new_cache
from deepresearch.agent.model.embedded.layers.forward import (
    LeanForward,
    PassPlan,
    RowAttention,
    attention_mask,
    biased_attention,
    grouped_bias,
    supports,
)

from .test_prefix_cache import recorded_calls, same


def transformers_logits(model: Any, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, cache: Any,
                        keep: int, **extra: Any) -> torch.Tensor:
    return model(input_ids=ids, attention_mask=mask, position_ids=positions, past_key_values=cache, use_cache=True,
                 logits_to_keep=keep, **extra).logits


def steps() -> list[tuple[list[list[int]], int]]:
    """(feeds per row, logits kept): a left-padded prefill of unequal prompts, a ragged step (row 0 feeds a
    3-token run, row 1 one token: two holes in row 1), then two plain decode steps."""
    gen = torch.Generator().manual_seed(0)
    prompt = [torch.randint(10, 40_000, (n,), generator=gen).tolist() for n in (23, 9)]
    return [(prompt, 1), ([[11, 12, 13], [14]], 3), ([[15], [16]], 1), ([[17], [18]], 1)]


def run(forward: Any, model: Any, plan: list[tuple[list[list[int]], int]] | None = None) -> list[torch.Tensor]:
    """The logits of each step of `plan` (default: steps()) for two rows."""
    empty = torch.zeros((2, 0), dtype=torch.long)
    kv = KVBatch(new_cache(model.config.num_hidden_layers), empty, torch.zeros(2, dtype=torch.long))
    out = []
    for feeds, keep in plan or steps():
        width = max(map(len, feeds))
        ids = torch.zeros((2, width), dtype=torch.long)
        for i, feed in enumerate(feeds):
            ids[i, width - len(feed):] = torch.tensor(feed)
        mask, positions = kv.step_inputs([len(f) for f in feeds])
        out.append(forward(ids, mask, positions, kv.cache, keep))
    return out


def real_columns(logits: list[torch.Tensor]) -> list[torch.Tensor]:
    """Row 1's kept columns of the ragged step are padding there: compare only real ones."""
    return [logits[0], logits[1][0], logits[1][1, -1], logits[2], logits[3]]


@torch.inference_mode()
def test_the_lean_forward_gives_transformers_logits_through_padding_holes_and_decoding(hf_model):
    lean = LeanForward(hf_model)
    expected = run(lambda *a: transformers_logits(hf_model, *a), hf_model)
    got = run(lean, hf_model)
    for e, g in zip(real_columns(expected), real_columns(got), strict=True):
        assert torch.isfinite(g).all()
        assert torch.allclose(e, g, atol=2e-3), float((e - g).abs().max())
        assert int(e.argmax(-1).flatten()[0]) == int(g.argmax(-1).flatten()[0])


def test_a_padding_query_sees_itself_so_no_attention_row_is_empty():
    mask = torch.tensor([[0, 0, 1, 1], [1, 1, 1, 1]])
    visible = attention_mask(mask, fed=4)
    assert visible.shape == (2, 1, 4, 4)
    assert visible.any(dim=-1).all()
    assert visible[0, 0, 3].tolist() == [False, False, True, True]  # real query: real keys up to itself
    assert visible[0, 0, 0].tolist() == [True, False, False, False]  # padding query: only itself
    assert attention_mask(torch.ones((2, 5), dtype=torch.long), fed=1) is None  # plain decode: no mask


def test_attention_row_by_row_equals_the_batched_attention_on_every_real_query():
    # row 0: cache from column 2, feeds 3; row 1: a hole at column 4, feeds 1; row 2: full, feeds 1;
    # row 3: right-padded (the engine's `score`), its 2 real columns first
    mask = torch.tensor([[0, 0, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0, 0, 1], [1, 1, 1, 1, 1, 0, 0, 1],
                         [1, 1, 1, 1, 1, 1, 1, 0]])
    fed, gen = 3, torch.Generator().manual_seed(0)
    q = torch.randn((4, 9, fed, 64), generator=gen)
    keys, values = torch.randn((2, 4, 3, 8, 64), generator=gen)
    visible = attention_mask(mask, fed)
    by_row = RowAttention(mask, fed, visible, group=3)
    rows = [(row, first, queries) for row, first, queries, _ in by_row.rows]
    assert rows == [(0, 2, 3), (1, 0, 1), (2, 0, 1), (3, 0, 3)]
    batched, rowwise = biased_attention(q, keys, values, grouped_bias(visible, 3)), by_row(q, keys, values)
    real = mask[:, -fed:].bool()
    assert torch.allclose(batched.transpose(1, 2)[real], rowwise.transpose(1, 2)[real], atol=1e-6)
    assert rowwise[:3].transpose(1, 2)[~real[:3]].abs().sum() == 0  # padding queries: zeros, packed away later


def test_only_plain_llama_models_are_supported(hf_model):
    assert supports(hf_model)
    assert not supports(SimpleNamespace(config=SimpleNamespace(model_type="gpt2")))
    assert not supports(SimpleNamespace(config=SimpleNamespace(model_type="llama", attention_bias=True)))
    assert not supports(SimpleNamespace(config=SimpleNamespace(model_type="llama",
                                                               rope_parameters={"rope_type": "llama3"})))
    with pytest.raises(ValueError, match="plain Llama"):
        LeanForward(SimpleNamespace(config=SimpleNamespace(model_type="gpt2")))


@torch.inference_mode()
def test_a_merged_adapter_is_what_the_lean_forward_computes_with(model_dir, lora_dir):
    from deepresearch.agent.model.embedded.models.adapters import AdapterSet
    from deepresearch.agent.model.embedded.models.llama import LlamaWeights

    # As the engine does: the lean forward reads the weights loaded without transformers; the adapter
    # load builds transformers' model on them and peft wraps that.
    adapters = AdapterSet(LlamaWeights.load(model_dir))
    lean = LeanForward(adapters.weights)
    adapters.load("a", lora_dir)
    extra = adapters.prepare(["a", None])  # mixed rows: peft's unmerged LoRA path is the reference
    assert extra
    expected = run(lambda *a: transformers_logits(adapters.model, *a, **extra), adapters.model)
    assert adapters.prepare(["a", "a"]) == {}  # one adapter: merged into the weights the lean forward reads
    merged = run(lean, adapters.model)
    assert adapters.prepare([None, None]) == {}  # LoRA off: the base weights again
    base = run(lean, adapters.model)
    assert torch.allclose(expected[3][0], merged[3][0], atol=2e-3)  # row 0 is the adapter's row
    assert not torch.allclose(merged[3][0], base[3][0], atol=1e-2)


@pytest.fixture(scope="module")
def transformers_engine(model_dir: Path) -> Iterator[Any]:
    from deepresearch.agent.model.embedded.chat_model import EmbeddedChatModel
    from deepresearch.agent.model.embedded.config import EngineConfig

    model = EmbeddedChatModel.load(model_dir, EngineConfig(max_batch=8, forward="transformers"))
    assert model._engine.forward.lean is None
    yield model
    model._engine.close()


async def test_the_engine_gives_the_same_completions_with_either_forward(embedded, transformers_engine):
    assert embedded._engine.forward.lean is not None  # the default
    calls = recorded_calls()
    expected = await transformers_engine.chat_many(calls)
    got = await embedded.chat_many(calls)
    assert all(c.parsed is not None for c in got)
    assert all(same(g, e) for g, e in zip(got, expected, strict=True))


async def test_the_model_forward_setting_reaches_the_engine():
    from deepresearch.agent.config import ModelSettings
    from deepresearch.agent.model.factory import build_model

    from .conftest import model_cache_dir

    model = build_model(ModelSettings(forward="transformers"), cache_dir=model_cache_dir())
    try:
        assert model._engine.forward.lean is None
        assert (await model.complete(recorded_calls()[0])).parsed is not None
    finally:
        await model.close()


@torch.inference_mode()
def test_rows_that_mix_adapters_get_their_own_lora_products_in_the_lean_forward(model_dir, lora_dir):
    from deepresearch.agent.model.embedded.models.adapters import AdapterSet
    from deepresearch.agent.model.embedded.models.llama import LlamaWeights

    adapters = AdapterSet(LlamaWeights.load(model_dir))
    lean = LeanForward(adapters.weights)
    base = run(lean, adapters.weights)
    adapters.load("a", lora_dir)
    extra = adapters.prepare(["a", None])  # peft's mixed batch on transformers' forward: the reference
    expected = run(lambda *a: transformers_logits(adapters.model, *a, **extra), adapters.model)
    computable, groups = adapters.lean_rows(["a", None])
    assert computable and [rows for rows, _ in groups] == [[0]]
    mixed = run(lambda *a: lean(*a, lora=groups), adapters.model)
    for want, got in zip(real_columns(expected), real_columns(mixed), strict=True):
        assert torch.allclose(want, got, atol=1e-3), (want - got).abs().max()
    assert not torch.allclose(mixed[3][0], base[3][0], atol=1e-2)  # row 0 is on the adapter
    assert torch.allclose(mixed[3][1], base[3][1], atol=1e-4)  # row 1 is not


def test_an_adapter_that_is_not_plain_lora_takes_peft_s_path(model_dir, tmp_path):
    from deepresearch.agent.model.embedded.models.adapters import AdapterSet
    from deepresearch.agent.model.embedded.models.llama import LlamaWeights
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    dora = get_peft_model(AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32),
                          LoraConfig(r=4, target_modules=["q_proj"], use_dora=True))
    dora.save_pretrained(tmp_path / "dora")
    adapters = AdapterSet(LlamaWeights.load(model_dir))
    adapters.load("dora", tmp_path / "dora")
    assert adapters.lean_rows(["dora", None]) == (False, [])
    assert adapters.lean_rows(["dora", "dora"]) == (True, [])  # one adapter: merged into the weights


@torch.inference_mode()
def test_the_lean_forward_runs_torch_on_one_thread_and_gives_the_threads_back(hf_model, monkeypatch):
    from deepresearch.agent.model.embedded.layers import forward

    seen: list[int] = []
    attention = forward.biased_attention

    def recording(*args: Any) -> torch.Tensor:
        seen.append(torch.get_num_threads())
        return attention(*args)

    def failing(*args: Any) -> torch.Tensor:
        raise RuntimeError("attention failed")

    monkeypatch.setattr(forward, "biased_attention", recording)
    lean, before = LeanForward(hf_model), torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        with_one = run(lean, hf_model)
        assert torch.get_num_threads() == 2
        assert seen and set(seen) == {1}
        monkeypatch.setattr(forward, "biased_attention", failing)
        with pytest.raises(RuntimeError, match="attention failed"):  # a failed pass gives the threads back too
            run(lean, hf_model)
        assert torch.get_num_threads() == 2
        monkeypatch.setattr(forward, "biased_attention", attention)
        # The ops on two threads (the forward's body called directly) round differently only where SDPA
        # splits a decode step's keys between threads: ~3e-5 in the logits.
        with_two = run(lambda *a: lean._forward(*a, PassPlan()).logits, hf_model)
        for one, two in zip(real_columns(with_one), real_columns(with_two), strict=True):
            assert torch.allclose(one, two, atol=2e-4), float((one - two).abs().max())
            assert torch.equal(one.argmax(-1), two.argmax(-1))
    finally:
        torch.set_num_threads(before)
