"""The embedded engine with the real SmolLM2-135M: constrained JSON, batching, logprobs, sampling, errors."""

from __future__ import annotations

import asyncio

import jsonschema
import pytest
import torch
from deepresearch.agent.model.base import ModelError
from deepresearch.agent.model.types import ChatRequest, Message, Sampling

from .schemas import CASES

EOS = 2  # <|im_end|>


def request(prompt: str, schema=None, **sampling) -> ChatRequest:
    sampling.setdefault("max_tokens", 24)
    return ChatRequest(
        messages=[Message(role="system", content="Answer with one JSON object."), Message(role="user", content=prompt)]
        if schema
        else [Message(role="user", content=prompt)],
        json_schema=schema,
        sampling=Sampling(**sampling),
    )


async def test_constrained_output_parses_for_20_schemas(embedded):
    completions = await embedded.chat_many([request(p, s, max_tokens=48) for p, s in CASES])
    for (prompt, schema), completion in zip(CASES, completions, strict=True):
        assert completion.parsed is not None, f"{prompt!r} gave unparseable {completion.text!r}"
        jsonschema.validate(completion.parsed, schema)
        assert completion.finish_reason == "stop"
        assert completion.completion_token_ids[-1] == EOS
        assert len(completion.completion_token_ids) <= 48


async def test_a_looping_string_is_closed_before_max_tokens(embedded):
    # Unconstrained, this prompt loops inside the URL string well past 24 tokens (seen: 128+).
    schema = {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}
    completion = await embedded.complete(request("Which web page would you open to read about the Moon?", schema))
    assert isinstance(completion.parsed, dict) and set(completion.parsed) == {"url"}
    assert len(completion.completion_token_ids) <= 24


async def test_batched_greedy_tokens_equal_unbatched(embedded):
    prompts = ["Name three rivers.", "What is 2+2?", "Who was Ada Lovelace?"]
    alone = [await embedded.complete(request(p, max_tokens=16)) for p in prompts]
    together = await embedded.chat_many([request(p, max_tokens=16) for p in prompts])
    assert [c.completion_token_ids for c in together] == [c.completion_token_ids for c in alone]
    for a, b in zip(alone, together, strict=True):
        assert a.prompt_token_ids == b.prompt_token_ids
        assert b.logprobs == pytest.approx(a.logprobs, abs=1e-3)


async def test_requests_joining_a_running_batch_decode_as_if_alone(embedded):
    """Continuous batching: rows admitted mid-decode (left-padded cache merge) and rows leaving early."""
    long = request("Tell a long story about a dragon.", max_tokens=28)
    late = [request("What is the capital of Italy?", max_tokens=6), request("Count from one to five.", max_tokens=10)]
    alone = [await embedded.complete(r) for r in [long, *late]]

    async def submit_later(r: ChatRequest, delay: float):
        await asyncio.sleep(delay)
        return await embedded.complete(r)

    mixed = await asyncio.gather(embedded.complete(long), submit_later(late[0], 0.3), submit_later(late[1], 0.6))
    assert [c.completion_token_ids for c in mixed] == [c.completion_token_ids for c in alone]


async def test_logprobs_are_those_of_the_model_for_the_generated_tokens(embedded, model_dir):
    from transformers import AutoModelForCausalLM

    completion = await embedded.complete(request("Describe the sea in one sentence.", max_tokens=16))
    assert len(completion.logprobs) == len(completion.completion_token_ids) == 16
    assert all(lp <= 0.0 for lp in completion.logprobs)
    # Teacher-forced recomputation over prompt + completion, independent of the engine's KV cache.
    reference = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    ids = torch.tensor([completion.prompt_token_ids + completion.completion_token_ids])
    with torch.inference_mode():
        logprobs = torch.log_softmax(reference(ids).logits[0].float(), dim=-1)
    start = len(completion.prompt_token_ids)
    expected = [float(logprobs[start - 1 + i, t]) for i, t in enumerate(completion.completion_token_ids)]
    assert completion.logprobs == pytest.approx(expected, abs=2e-3)
    # Greedy: each chosen token is the argmax of the model's distribution.
    assert completion.completion_token_ids == [
        int(logprobs[start - 1 + i].argmax()) for i in range(len(completion.completion_token_ids))
    ]


async def test_grammar_mask_renormalises_logprobs(embedded):
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    completion = await embedded.complete(request("Name a city in Japan.", schema, max_tokens=16))
    # The first token is forced to open the object; under the masked distribution it is near-certain.
    assert completion.text.startswith("{")
    assert completion.logprobs[0] > -1.0
    assert all(lp <= 0.0 for lp in completion.logprobs)


async def test_seeded_sampling_repeats_and_seeds_differ(embedded):
    def sampled(seed: int) -> ChatRequest:
        return request("Invent a name for a cat.", temperature=1.0, top_p=0.9, seed=seed, max_tokens=12)

    a, b, c = await embedded.chat_many([sampled(7), sampled(7), sampled(8)])
    assert a.completion_token_ids == b.completion_token_ids
    assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)
    assert a.completion_token_ids != c.completion_token_ids


async def test_stop_strings_and_length(embedded):
    # Unstopped, the greedy answer is "Hello there, welcome to my world! ..." (vLLM gives the same).
    cut = await embedded.complete(
        ChatRequest(messages=[Message(role="user", content="Say hi")], sampling=Sampling(max_tokens=40, stop=[","]))
    )
    assert cut.text == "Hello there" and cut.finish_reason == "stop"
    short = await embedded.complete(request("Tell a long story.", max_tokens=3))
    assert short.finish_reason == "length" and len(short.completion_token_ids) == 3


async def test_prompt_ids_are_the_chat_template_tokenised(embedded):
    completion = await embedded.complete(request("Hi", max_tokens=1))
    text = embedded._tokenizer.decode(completion.prompt_token_ids)
    assert text.startswith("<|im_start|>system\n")
    assert text.endswith("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")


async def test_bad_inputs_give_one_line_errors(embedded, tmp_path):
    bad_calls = [
        ("unknown adapter 'nope'",
         embedded.complete(ChatRequest(messages=[Message(role="user", content="x")], adapter="nope"))),
        ("cannot compile the JSON schema",
         embedded.complete(request("x", {"type": "object", "properties": {"a": {"type": "no-such-type"}}}))),
        ("not a LoRA adapter directory", embedded.load_adapter("broken", tmp_path)),
        ("does not fit the context", embedded.complete(request("word " * 9000))),
        ("unknown adapter 'ghost'", embedded.unload_adapter("ghost")),
    ]  # fmt: skip
    for expected, call in bad_calls:
        with pytest.raises(ModelError, match=expected) as caught:
            await call
        assert "\n" not in str(caught.value)


async def test_score_gives_the_model_logprobs_of_each_continuation(embedded, model_dir):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    prompt = "Context: Aphra Behn died on 16 April 1689 in London.\nQuestion: In what year did she die?\nAnswer:"
    right, wrong = await embedded.score(prompt, [" 1689", " London"])
    assert right and wrong and all(lp <= 0 for lp in right + wrong)
    assert sum(right) / len(right) > sum(wrong) / len(wrong)  # the answer reads better than a wrong span
    # Same numbers as a plain forward pass of the unbatched model.
    tok = AutoTokenizer.from_pretrained(model_dir)
    ref = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
    p = tok(prompt, add_special_tokens=False)["input_ids"]
    for got, tail in ((right, " 1689"), (wrong, " London")):  # the shorter one is right-padded in the batch
        c = tok(tail, add_special_tokens=False)["input_ids"]
        with torch.no_grad():
            logp = torch.log_softmax(ref(torch.tensor([p + c])).logits[0].float(), -1)
        expected = [float(logp[len(p) + j - 1, t]) for j, t in enumerate(c)]
        assert got == pytest.approx(expected, abs=1e-4)
    assert await embedded.score(prompt, []) == []
