"""Reuse of shared prompt prefixes in the embedded engine (the system message's keys/values, and the longest
prefix shared with a recent prompt), with the real SmolLM2-135M: the outputs of a full prefill, alone and in
mixed batches, and never an adapter's stale prefix."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from deepresearch.agent.model.types import ChatRequest, Message, Sampling

from .conftest import make_random_lora

WORKLOAD = Path(__file__).resolve().parents[2] / "bench" / "agent_calls.jsonl"
ROLES = ("planner", "You read one source", "You write the final answer")


def recorded_calls() -> list[ChatRequest]:
    """The first recorded call of the planner, extractor and writer, plus a second extractor call."""
    calls, wanted = [], [*ROLES, "You read one source"]
    for line in WORKLOAD.read_text().splitlines():
        call = json.loads(line)
        head = call["messages"][0]["content"][:200]
        mark = next((m for m in wanted if m in head), None)
        if mark is not None:
            wanted.remove(mark)
            calls.append(ChatRequest(messages=[Message(**m) for m in call["messages"]], json_schema=call["schema"],
                                     sampling=Sampling(max_tokens=call["max_tokens"])))
    assert not wanted, f"no recorded call for {wanted}"
    return calls


@pytest.fixture(scope="module")
def full_prefill(model_dir: Path) -> Iterator[Any]:
    from deepresearch.agent.model.embedded.chat_model import EmbeddedChatModel
    from deepresearch.agent.model.embedded.config import EngineConfig

    model = EmbeddedChatModel.load(model_dir, EngineConfig(max_batch=8, prefix_cache=False))
    yield model
    model._engine.close()


def same(a: Any, b: Any) -> bool:
    return a.completion_token_ids == b.completion_token_ids and all(
        abs(x - y) < 1e-3 for x, y in zip(a.logprobs, b.logprobs, strict=True))


async def test_a_cached_system_message_gives_the_outputs_of_a_full_prefill(model_dir, full_prefill):
    from deepresearch.agent.model.embedded.chat_model import EmbeddedChatModel
    from deepresearch.agent.model.embedded.config import EngineConfig

    calls = recorded_calls()
    expected = [await full_prefill.complete(c) for c in calls]
    assert all(c.parsed is not None for c in expected)
    model = EmbeddedChatModel.load(model_dir, EngineConfig(max_batch=8, prompt_cache_tokens=0))  # system messages only
    try:
        alone = [await model.complete(c) for c in calls]  # the second extractor call reuses the first's prefix
        together = await model.chat_many(calls)  # all four admitted as one group, every prefix cached
        assert all(same(a, e) for a, e in zip(alone, expected, strict=True))
        assert all(same(t, e) for t, e in zip(together, expected, strict=True))
        assert model._engine.prefixes.hits >= 5 and model._engine.prefixes.prompts.hits == 0
    finally:
        await model.close()


async def test_a_prefix_shared_with_an_earlier_prompt_gives_the_outputs_of_a_full_prefill(embedded, full_prefill):
    calls = recorded_calls()
    expected = [await full_prefill.complete(c) for c in calls]
    embedded.clear_prefix_cache()
    prompts = embedded._engine.prefixes.prompts
    hits, shared = prompts.hits, prompts.shared_tokens
    alone = [await embedded.complete(c) for c in calls]
    # The second extractor call shares the system message and the question with the first: more than the
    # system message alone, less than its whole prompt.
    extractor = embedded.prompt_token_ids(calls[2].messages)
    system = embedded.prefix_length(calls[2].messages, extractor)
    assert prompts.hits - hits == 1 and system < prompts.shared_tokens - shared < len(extractor) - 1
    shared = prompts.shared_tokens
    together = await embedded.chat_many(calls)  # every prompt seen: all but its last token reused
    assert prompts.hits - hits == 5
    assert prompts.shared_tokens - shared == sum(
        len(embedded.prompt_token_ids(c.messages)) - 1 for c in calls)
    assert all(same(a, e) for a, e in zip(alone, expected, strict=True))
    assert all(same(t, e) for t, e in zip(together, expected, strict=True))


async def test_rows_sent_together_wait_for_the_one_whose_prompt_they_share(embedded, full_prefill):
    """A training group's G rollouts send the same prompt at once: the first is prefilled, the others start
    from its keys/values."""
    call = recorded_calls()[1]
    expected = await full_prefill.complete(call)
    embedded.clear_prefix_cache()
    prompts = embedded._engine.prefixes.prompts
    hits, shared = prompts.hits, prompts.shared_tokens
    got = await embedded.chat_many([call] * 4)
    assert all(same(g, expected) for g in got)
    assert prompts.hits - hits == 3
    assert prompts.shared_tokens - shared == 3 * (len(embedded.prompt_token_ids(call.messages)) - 1)


async def test_the_prefix_is_the_system_message_or_nothing(embedded):
    call = recorded_calls()[0]
    ids = embedded.prompt_token_ids(call.messages)
    length = embedded.prefix_length(call.messages, ids)
    system = embedded.prompt_token_ids(call.messages[:1])  # rendered with the assistant turn's opening
    assert 100 < length < len(ids) and ids[:length] == system[:length]
    assert embedded.prefix_length(call.messages[1:], embedded.prompt_token_ids(call.messages[1:])) == 0


@contextlib.asynccontextmanager
async def policy_reloaded_later(model: Any, reference: Any, model_dir: Path, tmp_path: Path,
                                seed: int) -> AsyncIterator[Callable[[], Awaitable[None]]]:
    """Adapter "policy": one random LoRA on `model`, another on `reference`; yields what reloads `model`'s
    "policy" with the reference's weights. Both unloaded after."""
    second = make_random_lora(model_dir, tmp_path / "b", seed=seed + 1, scale=0.05)
    await model.load_adapter("policy", make_random_lora(model_dir, tmp_path / "a", seed=seed, scale=0.05))
    await reference.load_adapter("policy", second)
    try:
        yield lambda: model.load_adapter("policy", second)
    finally:
        await model.unload_adapter("policy")
        await reference.unload_adapter("policy")


async def test_reloading_an_adapter_drops_its_cached_prefixes(embedded, full_prefill, model_dir, tmp_path):
    call = recorded_calls()[1].model_copy(update={"adapter": "policy"})
    async with policy_reloaded_later(embedded, full_prefill, model_dir, tmp_path, seed=4) as reload:
        first = await embedded.complete(call)  # caches the prefix under adapter a's weights
        await reload()
        assert same(await embedded.complete(call), await full_prefill.complete(call))
        assert not same(first, await full_prefill.complete(call))


async def test_the_next_process_starts_with_the_stored_prefixes(model_dir, full_prefill, tmp_path):
    from deepresearch.agent.model.embedded.chat_model import EmbeddedChatModel
    from deepresearch.agent.model.embedded.config import EngineConfig

    call = recorded_calls()[0]
    expected = await full_prefill.complete(call)
    for process in range(2):
        model = EmbeddedChatModel.load(model_dir, EngineConfig(max_batch=8, store_dir=tmp_path))
        try:
            got = await model.complete(call)
        finally:
            await model.close()
        assert same(got, expected)
        # computed by the first model (and written), read back by the second
        assert (model._engine.prefixes.misses, model._engine.prefixes.loaded) == (1, process)
    assert len(list((tmp_path / "prefix-cache").glob("*.safetensors"))) == 1


async def test_the_app_keeps_prefixes_beside_the_weights():
    from deepresearch.agent.config import ModelSettings
    from deepresearch.agent.model.embedded.engine.prefix_cache import STORE_DIR_NAME
    from deepresearch.agent.model.embedded.loaders.packaged_model import converted_dir
    from deepresearch.agent.model.factory import build_model

    from .conftest import model_cache_dir

    model = build_model(ModelSettings(), cache_dir=model_cache_dir())
    try:
        await model.complete(recorded_calls()[0])
        assert model._engine.prefixes._store.directory == converted_dir(model_cache_dir()) / STORE_DIR_NAME
        assert any(model._engine.prefixes._store.directory.glob("*.safetensors"))
    finally:
        await model.close()


async def test_a_prefill_that_fails_fails_every_row_it_admitted_and_the_engine_goes_on(embedded, monkeypatch):
    """Rows admitted together that wait for an earlier row's prefill are in no running row yet: when that
    prefill raises, they must fail with it, not wait forever."""
    import asyncio

    call = recorded_calls()[1]
    embedded.clear_prefix_cache()
    forward = embedded._engine.forward

    def failing(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("prefill failed")

    monkeypatch.setattr(forward, "step", failing)  # every pass goes through it
    results = await asyncio.wait_for(asyncio.gather(*(embedded.complete(call) for _ in range(4)),
                                                    return_exceptions=True), timeout=60)
    assert all(isinstance(r, Exception) and "prefill failed" in str(r) for r in results), results
    monkeypatch.undo()
    assert (await embedded.complete(call)).text
