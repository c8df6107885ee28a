"""LoRA adapters on the embedded engine: load/unload by name, per-request selection, mixed batches."""

from __future__ import annotations

from deepresearch.agent.model.base import BASE_MODEL
from deepresearch.agent.model.types import ChatRequest, Message, Sampling

from .conftest import make_random_lora


def ask(adapter: str | None = None) -> ChatRequest:
    return ChatRequest(
        messages=[Message(role="user", content="Say hi")], sampling=Sampling(max_tokens=8), adapter=adapter
    )


async def test_load_unload_changes_outputs_and_rows_pick_their_adapter(embedded, lora_dir, model_dir, tmp_path):
    base = await embedded.complete(ask())
    await embedded.load_adapter("rand-a", lora_dir)
    await embedded.load_adapter("rand-b", make_random_lora(model_dir, tmp_path / "b", seed=2))
    try:
        assert embedded.adapters() == ["rand-a", "rand-b"]
        # One batch, three different weights: base, adapter a, adapter b.
        plain, with_a, with_b = await embedded.chat_many([ask(), ask("rand-a"), ask("rand-b")])
        assert plain.completion_token_ids == base.completion_token_ids and plain.adapter is None
        assert with_a.completion_token_ids != base.completion_token_ids and with_a.adapter == "rand-a"
        assert with_b.completion_token_ids != with_a.completion_token_ids
        # Alone, an adapter row decodes exactly as it did inside the mixed batch.
        assert (await embedded.complete(ask("rand-a"))).completion_token_ids == with_a.completion_token_ids
        # The active adapter applies when a request names none.
        embedded.active_adapter = "rand-b"
        assert (await embedded.complete(ask())).completion_token_ids == with_b.completion_token_ids
        # BASE_MODEL asks for the base weights even then (a role outside a scoped adapter's roles).
        scoped_out = await embedded.complete(ask(BASE_MODEL))
        assert scoped_out.completion_token_ids == base.completion_token_ids and scoped_out.adapter is None
    finally:
        await embedded.unload_adapter("rand-b")
        await embedded.unload_adapter("rand-a")
    assert embedded.active_adapter is None and embedded.adapters() == []
    assert (await embedded.complete(ask())).completion_token_ids == base.completion_token_ids


async def test_reloading_a_name_replaces_the_adapter(embedded, lora_dir, model_dir, tmp_path):
    await embedded.load_adapter("policy", lora_dir)
    try:
        first = await embedded.complete(ask("policy"))
        await embedded.load_adapter("policy", make_random_lora(model_dir, tmp_path / "v2", seed=3))
        second = await embedded.complete(ask("policy"))
        assert embedded.adapters() == ["policy"]
        assert second.completion_token_ids != first.completion_token_ids
    finally:
        await embedded.unload_adapter("policy")


def test_batches_on_one_adapter_run_merged_and_unloading_restores_the_base_weights(model_dir, lora_dir, tmp_path):
    import torch
    from deepresearch.agent.model.embedded.models.adapters import AdapterSet
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    ids = torch.tensor([[1, 2087, 314, 253, 1345, 28], [1, 1073, 282, 1190, 30, 216]])

    # Merged and per-row LoRA differ only by float rounding (logits ~15, differences ~1e-4).
    def logits(adapters: AdapterSet, rows: list[str | None]) -> torch.Tensor:
        with torch.inference_mode():
            return adapters.model(input_ids=ids, **adapters.prepare(rows)).logits

    adapters = AdapterSet(base)
    plain = logits(adapters, [None, None])
    adapters.load("a", lora_dir)
    adapters.load("b", make_random_lora(model_dir, tmp_path / "b", seed=2))
    mixed = logits(adapters, ["a", "b"])  # per-row path: unmerged
    assert adapters.prepare(["a", "a"]) == {}  # one adapter for all rows: merged, no per-row arguments
    merged_a = logits(adapters, ["a", "a"])
    merged_b = logits(adapters, ["b", "b"])  # switching merges b in place of a
    assert torch.allclose(merged_a[0], mixed[0], atol=2e-3) and torch.allclose(merged_b[1], mixed[1], atol=2e-3)
    assert not torch.allclose(merged_a, plain, atol=1e-2)
    assert torch.allclose(logits(adapters, [None, None]), plain, atol=2e-3)  # layers off, nothing merged
    logits(adapters, ["a", "a"])
    adapters.unload("a")  # while merged: its delta must leave the weights with it
    assert torch.allclose(logits(adapters, ["b", "b"])[1], mixed[1], atol=2e-3)
    adapters.unload("b")
    assert torch.allclose(logits(adapters, [None, None]), plain, atol=2e-3)
