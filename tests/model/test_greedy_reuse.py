"""Identical greedy requests share one decode (embedded/engine/greedy_reuse.py), with the real SmolLM2-135M: the same
output as decoding each, one engine job for equal requests in flight or repeated, never for sampled ones or
an adapter's old weights, and a caller that gives up cancels only what nobody else waits for."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from deepresearch.agent.model.types import ChatRequest, Message, Sampling

from .test_prefix_cache import policy_reloaded_later, recorded_calls, same


@pytest.fixture(scope="module")
def reusing(model_dir: Path) -> Iterator[Any]:
    from deepresearch.agent.model.embedded.chat_model import EmbeddedChatModel
    from deepresearch.agent.model.embedded.config import EngineConfig

    model = EmbeddedChatModel.load(model_dir, EngineConfig(max_batch=8, reuse_greedy=True))
    yield model
    model._engine.close()


def count_jobs(model: Any) -> list[Any]:
    """Every job the model submits to its engine, from now on."""
    jobs: list[Any] = []
    submit = model._engine.submit

    def counting(job: Any) -> Any:
        jobs.append(job)
        return submit(job)

    model._engine.submit = counting
    return jobs


async def test_equal_greedy_requests_share_one_decode_with_the_output_of_each(reusing, embedded):
    call = recorded_calls()[1]  # an extractor call: grammar, enum of sentences
    expected = await embedded.complete(call)
    jobs = count_jobs(reusing)
    together = await reusing.chat_many([call] * 3)  # in flight together: one job, three callers
    later = await reusing.complete(call)  # finished before: its result, no job
    assert len(jobs) == 1
    for got in [*together, later]:
        assert same(got, expected) and got.parsed == expected.parsed
        assert got.prompt_token_ids == expected.prompt_token_ids
    assert later.timings.prefill_s == later.timings.decode_s == 0.0  # no model work of its own
    together[1].completion_token_ids.append(0)  # each caller owns its lists
    assert later.completion_token_ids == expected.completion_token_ids


async def test_sampled_and_different_requests_are_decoded_each(reusing):
    question = [Message(role="user", content="Name a fruit.")]
    jobs = count_jobs(reusing)
    sampled = ChatRequest(messages=question, sampling=Sampling(temperature=0.8, seed=3, max_tokens=8))
    await reusing.chat_many([sampled, sampled])
    await reusing.complete(ChatRequest(messages=question, sampling=Sampling(max_tokens=8)))
    await reusing.complete(ChatRequest(messages=question, sampling=Sampling(max_tokens=9)))  # another limit
    assert len(jobs) == 4


async def test_a_reloaded_adapter_never_gets_its_old_weights_results(reusing, embedded, model_dir, tmp_path):
    call = recorded_calls()[0].model_copy(update={"adapter": "policy"})
    async with policy_reloaded_later(reusing, embedded, model_dir, tmp_path, seed=6) as reload:
        first = await reusing.complete(call)
        base = await reusing.complete(call.model_copy(update={"adapter": ""}))
        await reload()
        jobs = count_jobs(reusing)
        again = await reusing.complete(call)
        assert same(again, await embedded.complete(call)) and not same(first, again)
        await reusing.complete(call.model_copy(update={"adapter": ""}))  # the base model's result stays
        assert len(jobs) == 1 and base.adapter is None


async def test_a_caller_that_gives_up_cancels_only_a_decode_nobody_else_waits_for(reusing, embedded):
    story = ChatRequest(messages=[Message(role="user", content="Tell a long story about a lighthouse.")],
                        sampling=Sampling(max_tokens=48))
    expected = await embedded.complete(story)
    jobs = count_jobs(reusing)
    first = asyncio.ensure_future(reusing.complete(story))
    second = asyncio.ensure_future(reusing.complete(story))
    await asyncio.sleep(0.2)
    first.cancel()
    assert same(await second, expected)  # the shared decode went on for the caller still waiting
    assert len(jobs) == 1 and not jobs[0].cancelled

    alone = asyncio.ensure_future(reusing.complete(story.model_copy(update={"sampling": Sampling(max_tokens=47)})))
    await asyncio.sleep(0.2)
    alone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await alone
    assert jobs[1].cancelled  # its only caller left: the row is dropped
    # An equal request afterwards decodes anew instead of waiting for the dropped row.
    assert len(jobs) == 2
    again = await reusing.complete(story.model_copy(update={"sampling": Sampling(max_tokens=47)}))
    assert len(jobs) == 3 and again.finish_reason in ("stop", "length")


def test_the_key_is_what_decides_a_greedy_output_and_sampled_requests_have_none():
    from deepresearch.agent.model.embedded.engine.greedy_reuse import GreedyResults

    def request(**sampling: Any) -> ChatRequest:
        return ChatRequest(messages=[Message(role="user", content="hi")], sampling=Sampling(**sampling),
                           json_schema={"type": "object", "properties": {"a": {"type": "string"}}})

    results = GreedyResults()
    key = results.key(None, [1, 2], request(max_tokens=5, seed=1))
    assert key == results.key(None, [1, 2], request(max_tokens=5, seed=2))  # a seed draws nothing at T 0
    assert key != results.key("policy", [1, 2], request(max_tokens=5))
    assert key != results.key(None, [1, 3], request(max_tokens=5))
    assert key != results.key(None, [1, 2], request(max_tokens=5, stop=["."]))
    assert results.key(None, [1, 2], request(temperature=0.5)) is None
    assert GreedyResults(limit=0).key(None, [1, 2], request(max_tokens=5)) is None  # reuse turned off


def test_failed_jobs_are_not_shared_and_the_oldest_entries_go_first():
    from deepresearch.agent.model.embedded.engine.greedy_reuse import GreedyResults
    from deepresearch.agent.model.embedded.engine.jobs import GenerationJob

    results = GreedyResults(limit=2)
    failed, kept, newer, newest = (GenerationJob([i], Sampling()) for i in range(4))
    failed.future.set_exception(RuntimeError("engine step failed"))
    results.add((None, 0), failed)
    assert results.join((None, 0)) is None  # the next equal request decodes anew
    results.add((None, 1), kept)
    results.add(("policy", 2), newer)
    assert results.join((None, 1)).job is kept  # used again: ("policy", 2) is now the oldest
    results.add(("policy", 3), newest)
    assert results.join(("policy", 2)) is None and results.join((None, 1)).job is kept
    results.forget("policy")  # its weights changed
    assert results.join(("policy", 3)) is None and results.join((None, 1)).job is kept
