"""Jump-forward decoding with the real SmolLM2-135M: forced runs fed in one pass, marked, token-exact."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jsonschema
import pytest
import torch
import xgrammar as xgr
from deepresearch.agent.model.types import ChatRequest, Completion, Message, Sampling

from .schemas import TOOLS

WORKLOAD = Path(__file__).resolve().parents[2] / "bench" / "agent_calls.jsonl"
SENTENCES = [
    "The Eiffel Tower was completed in 1889 for the World's Fair held in Paris that year.",
    "Mount Everest, on the border of Nepal and China, is the highest mountain above sea level.",
    "The Amazon river carries more water to the sea than any other river in the world.",
]


def obj(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def recorded(role_mark: str) -> tuple[list[Message], dict[str, Any]]:
    """The first call of a role recorded from a graph run (bench/agent_calls.jsonl): real prompt and schema."""
    for line in WORKLOAD.read_text().splitlines():
        call = json.loads(line)
        if role_mark in call["messages"][0]["content"][:200]:
            return [Message(**m) for m in call["messages"]], call["schema"]
    raise AssertionError(f"no recorded call with {role_mark!r}")


def ask(prompt: str, schema: dict[str, Any], max_tokens: int = 96) -> ChatRequest:
    messages = [Message(role="system", content="Answer with one JSON object."), Message(role="user", content=prompt)]
    return ChatRequest(messages=messages, json_schema=schema, sampling=Sampling(max_tokens=max_tokens))


ENUM_CASES = [
    ask("Which sentence is about a river?", obj({"quote": {"enum": SENTENCES}})),
    ask("Which tool finds who wrote Hamlet, and is it a search?", obj({"tool": {"enum": TOOLS}, "is_search":
                                                                        {"type": "boolean"}})),
]


def load(model_dir: Path, mode: str) -> Iterator[Any]:
    from deepresearch.agent.model.embedded.chat_model import EmbeddedChatModel
    from deepresearch.agent.model.embedded.config import EngineConfig

    model = EmbeddedChatModel.load(model_dir, EngineConfig(max_batch=8, jump_forward=mode))
    yield model
    model._engine.close()


@pytest.fixture(scope="module")
def plain(model_dir: Path) -> Iterator[Any]:
    yield from load(model_dir, "off")


@pytest.fixture(scope="module")
def forced(model_dir: Path) -> Iterator[Any]:
    yield from load(model_dir, "forced")


@pytest.fixture(scope="module")
def reference(model_dir: Path) -> Any:
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()


def extractor_request() -> ChatRequest:
    messages, schema = recorded("read one source")
    return ChatRequest(messages=messages, json_schema=schema, sampling=Sampling(max_tokens=384))


def writer_request() -> ChatRequest:
    messages, schema = recorded("final answer")
    return ChatRequest(messages=messages, json_schema=schema, sampling=Sampling(max_tokens=384))


def assert_sampled_tokens_are_greedy(reference: Any, embedded: Any, request: ChatRequest, got: Completion) -> None:
    """One uncached forward over prompt + completion: every unforced token must be the grammar-masked argmax
    there (and its logged logprob that of the masked distribution), every forced one accepted by the grammar —
    so the engine's cached, ragged, hole-y steps computed what a plain full pass computes."""
    ids = got.prompt_token_ids + got.completion_token_ids
    with torch.no_grad():
        logits = reference(input_ids=torch.tensor([ids])).logits[0].float()
    matcher = xgr.GrammarMatcher(embedded._grammars.compile(request.json_schema))
    bitmask = xgr.allocate_token_bitmask(1, logits.shape[-1])
    forced = set(got.forced_positions)
    start = len(got.prompt_token_ids)
    for t, token in enumerate(got.completion_token_ids):
        if t in forced:
            assert got.logprobs[t] == 0.0
        else:
            row = logits[start + t - 1].clone().unsqueeze(0)
            matcher.fill_next_token_bitmask(bitmask, 0)
            xgr.apply_token_bitmask_inplace(row, bitmask)
            assert int(row.argmax()) == token, f"token {t} of {got.text!r}"
            assert got.logprobs[t] == pytest.approx(float(torch.log_softmax(row[0], -1)[token]), abs=2e-3)
        assert matcher.accept_token(token), f"token {t} rejected by the grammar"


def all_requests() -> list[ChatRequest]:
    city = obj({"city": {"type": "string"}, "country": {"type": "string"}})
    return [*ENUM_CASES, ask("Name a city in Japan and its country.", city), extractor_request(), writer_request()]


def count_passes(model: Any) -> tuple[list[list[int]], Any]:
    """Record the real (unmasked) ids of every forward pass the engine makes (whichever forward serves it);
    `.remove()` stops recording."""
    fed: list[list[int]] = []
    forward = model._engine.forward
    original = forward.step  # every pass goes through it

    def capture(input_ids: Any, mask: Any, *args: Any) -> Any:
        ids, row_mask = input_ids[0], mask[0]
        fed.append(ids[row_mask[-len(ids) :].bool()].tolist())  # this step's real columns of row 0
        return original(input_ids, mask, *args)

    forward.step = capture
    return fed, SimpleNamespace(remove=lambda: delattr(forward, "step"))


async def test_verified_jump_forward_decodes_exactly_as_plain_in_fewer_passes(embedded, plain):
    """The default mode: same tokens and logprobs as one pass per token (greedy), for every schema."""
    requests = all_requests()
    steps = await plain.chat_many(requests)
    passes, hook = count_passes(embedded)
    try:
        jumps = await embedded.chat_many(requests)
    finally:
        hook.remove()
    for jumped, stepped in zip(jumps, steps, strict=True):
        assert jumped.completion_token_ids == stepped.completion_token_ids, (jumped.text, stepped.text)
        assert jumped.logprobs == pytest.approx(stepped.logprobs, abs=1e-3)
        assert jumped.parsed == stepped.parsed and jumped.parsed is not None
        assert jumped.forced_positions == []  # every token was drawn by the sampler, none imposed
    # Plain decoding needs one pass per token of its longest row (all rows were admitted together).
    assert len(passes) < 0.8 * max(len(c.completion_token_ids) for c in jumps)
    # Each call reports the passes that drew its tokens: one per token without jump-forward, fewer with it.
    assert [c.timings.forward_passes for c in steps] == [len(c.completion_token_ids) for c in steps]
    assert all(0 < c.timings.forward_passes <= len(c.completion_token_ids) for c in jumps)
    assert sum(c.timings.forward_passes for c in jumps) < 0.8 * sum(len(c.completion_token_ids) for c in jumps)


async def test_verified_jump_forward_repeats_plain_seeded_sampling(embedded, plain):
    request = extractor_request()
    request.sampling = Sampling(temperature=0.8, seed=7, max_tokens=384)
    jumped, stepped = await embedded.complete(request), await plain.complete(request)
    assert jumped.completion_token_ids == stepped.completion_token_ids  # one draw per token in both modes
    assert jumped.logprobs == pytest.approx(stepped.logprobs, abs=1e-3)


async def test_verified_rows_batched_with_a_free_row_decode_as_each_alone(embedded, reference):
    free = ChatRequest(messages=[Message(role="user", content="Tell a long story about a dragon.")],
                       sampling=Sampling(max_tokens=24))
    jumping = [extractor_request(), ENUM_CASES[0]]
    alone = [await embedded.complete(r) for r in [free, *jumping]]
    together = await embedded.chat_many([free, *jumping])
    for a, b in zip(alone, together, strict=True):
        assert b.completion_token_ids == a.completion_token_ids
        assert b.logprobs == pytest.approx(a.logprobs, abs=1e-3)
    for request, got in zip(jumping, together[1:], strict=True):
        assert_sampled_tokens_are_greedy(reference, embedded, request, got)


async def test_forced_jump_forward_gives_plain_decodings_choice_of_enum_value(forced, plain):
    request = ENUM_CASES[0]  # which sentence: decided by the tokens after the forced "The"
    jumped, stepped = await forced.complete(request), await plain.complete(request)
    assert jumped.parsed == stepped.parsed and jumped.parsed is not None, (jumped.text, stepped.text)
    assert len(jumped.forced_positions) > len(jumped.completion_token_ids) / 2


async def test_forced_outputs_parse_and_forced_tokens_are_marked_with_logprob_zero(forced):
    requests = all_requests()
    for request, got in zip(requests, await forced.chat_many(requests), strict=True):
        assert got.finish_reason == "stop" and got.parsed is not None, got.text
        jsonschema.validate(got.parsed, request.json_schema)
        assert got.forced_positions == sorted(set(got.forced_positions))
        assert got.forced_positions[0] == 0  # `{"` opens every object: forced before the first choice
        assert all(got.logprobs[i] == 0.0 for i in got.forced_positions)


async def test_forced_logged_ids_are_exactly_the_ids_the_model_consumed(forced, reference):
    request = extractor_request()
    forced.clear_prefix_cache()  # so the system message goes through the model too, in a pass of its own
    passes, hook = count_passes(forced)
    try:
        got = await forced.complete(request)
    finally:
        hook.remove()
    consumed = [token for step in passes for token in step]
    # Everything but the final <|im_end|> went through the model, in order, once; forced runs share a pass.
    assert consumed == got.prompt_token_ids + got.completion_token_ids[:-1]
    assert len(passes) < len(got.completion_token_ids)
    assert any(len(step) > 1 for step in passes[2:])
    assert_sampled_tokens_are_greedy(reference, forced, request, got)


async def test_forced_rows_batched_with_a_free_row_decode_as_each_alone(forced, reference):
    free = ChatRequest(messages=[Message(role="user", content="Tell a long story about a dragon.")],
                       sampling=Sampling(max_tokens=40))
    jumping = [extractor_request(), ENUM_CASES[0]]
    alone = [await forced.complete(r) for r in [free, *jumping]]
    together = await forced.chat_many([free, *jumping])
    for a, b in zip(alone, together, strict=True):
        assert b.completion_token_ids == a.completion_token_ids
        assert b.forced_positions == a.forced_positions
        assert b.logprobs == pytest.approx(a.logprobs, abs=1e-3)
    for request, got in zip(jumping, together[1:], strict=True):
        assert_sampled_tokens_are_greedy(reference, forced, request, got)


@pytest.mark.parametrize("mode", ["forced", "verified"])
async def test_a_forced_run_is_cut_at_max_tokens(mode, forced, embedded, plain):
    request = ask("Which sentence is about a mountain?", obj({"quote": {"enum": SENTENCES}}), 9)
    got = await (forced if mode == "forced" else embedded).complete(request)
    assert len(got.completion_token_ids) == 9 and got.finish_reason == "length"
    if mode == "verified":
        assert got.completion_token_ids == (await plain.complete(request)).completion_token_ids


def test_the_trainer_puts_no_loss_on_marked_forced_tokens():
    from deepresearch.train.update.batching import loss_positions
    from deepresearch.train.update.samples import samples_from_events

    payload = {"role": "extractor", "prompt_token_ids": [1, 2], "completion_token_ids": [5, 6, 7, 8],
               "logprobs": [0.0, -0.7, 0.0, -1e-6], "forced_positions": [0, 2], "finish_reason": "stop"}
    old = {k: v for k, v in payload.items() if k != "forced_positions"}  # a trace from before the mark
    events = [{"kind": "llm", "seq": 1, "payload": payload}, {"kind": "llm", "seq": 2, "payload": old}]
    marked, unmarked = samples_from_events("r", "g", events, advantage=1.0)[0]
    assert marked.forced_positions == [0, 2] and unmarked.forced_positions == []
    assert loss_positions(marked, skip_forced=True) == [1]
    assert loss_positions(unmarked, skip_forced=True) == [1]  # the p ≥ 0.9999 rule still covers old traces
    assert loss_positions(marked, skip_forced=False) == [0, 1, 2, 3]
    assert Completion.model_validate({**old, "text": "", "model": "m", "logprobs": old["logprobs"]}).forced_positions \
        == []


async def test_the_model_jump_forward_setting_reaches_the_engine(tmp_path):
    from deepresearch.agent.config import ModelSettings
    from deepresearch.agent.model.factory import build_model

    from .conftest import model_cache_dir

    model = build_model(ModelSettings(jump_forward="forced"), cache_dir=model_cache_dir())
    try:
        got = await model.complete(ENUM_CASES[0])
        assert got.forced_positions and all(got.logprobs[i] == 0.0 for i in got.forced_positions)
    finally:
        await model.close()


async def test_a_row_stopped_inside_a_multibyte_character_jumps_nowhere_and_finishes(embedded, model_dir):
    """Seen in an eval: the model drew the first byte of "°" as its own token, and xgrammar could not return
    the forced rest (a lone UTF-8 continuation byte) as text — the step failed every row of the batch."""
    from deepresearch.agent.model.embedded.decoding.grammar import GrammarCache
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    schema = obj({"q": {"enum": ["It is 45° north"]}})
    row = GrammarCache(tokenizer, len(tokenizer)).matcher(GrammarCache(tokenizer, len(tokenizer)).compile(schema))
    for token in tokenizer.encode('{"q":"It is 45', add_special_tokens=False):
        assert row.accept(token)
    assert row.accept(tokenizer.convert_tokens_to_ids("Â"))  # byte 0xC2, the first of "°"
    assert row.forced_string() == ""
    got = await embedded.complete(ask("Where is it?", schema))
    assert got.parsed == {"q": "It is 45° north"}
