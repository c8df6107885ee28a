"""PromptCache's bookkeeping without a model: which kept prompt a new one starts from, the token budget,
adapters kept apart, and which rows admitted together wait for an earlier one."""

from __future__ import annotations

import torch
from deepresearch.agent.model.embedded.engine.jobs import GenerationJob
from deepresearch.agent.model.embedded.engine.prefix_cache import MIN_PREFIX, PrefixCache, PromptCache
from deepresearch.agent.model.types import Sampling


def states(ids: list[int], layers: int = 2) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Keys/values whose every position holds its token id, so a slice shows where it came from."""
    column = torch.tensor(ids, dtype=torch.float32).view(1, 1, len(ids), 1)
    return [(column.clone(), -column.clone()) for _ in range(layers)]


SYSTEM = list(range(1000, 1000 + 40))  # a role's system message, longer than MIN_PREFIX


def prompt(question: int, rest: list[int]) -> list[int]:
    return SYSTEM + [question] * 10 + rest


def test_a_prompt_starts_from_the_longest_prefix_a_kept_prompt_shares():
    cache = PromptCache(limit=1000)
    cache.remember(None, prompt(1, [5, 6, 7]), states(prompt(1, [5, 6, 7])))
    cache.remember(None, prompt(2, [5, 6, 7]), states(prompt(2, [5, 6, 7])))
    new = prompt(2, [5, 6, 9])
    length, key = cache.shared_length(None, new)
    assert length == len(SYSTEM) + 12  # system, question, 5, 6
    keys, values = cache.take(key, length)[0]
    assert keys.flatten().tolist() == new[:length] and values.flatten().tolist() == [-t for t in new[:length]]
    assert (cache.hits, cache.shared_tokens) == (1, length)


def test_an_identical_prompt_reuses_all_but_its_last_token():
    cache = PromptCache(limit=1000)
    ids = prompt(1, [5, 6, 7])
    cache.remember(None, ids, states(ids))
    assert cache.shared_length(None, ids)[0] == len(ids) - 1  # the prefill must feed one token for its logits


def test_adapters_never_share_keys_and_values():
    cache = PromptCache(limit=1000)
    ids = prompt(1, [5])
    cache.remember("policy", ids, states(ids))
    assert cache.shared_length(None, ids) == (0, None)
    assert cache.shared_length("policy", ids)[0] == len(ids) - 1


def test_the_least_recently_used_prompts_go_first_when_the_budget_is_spent():
    one, two, three = prompt(1, [5]), prompt(2, [5]), prompt(3, [5])
    cache = PromptCache(limit=2 * len(one))
    cache.remember(None, one, states(one))
    cache.remember(None, two, states(two))
    cache.take(cache.shared_length(None, one)[1], 45)  # one is used again: two is now the oldest
    cache.remember(None, three, states(three))
    assert cache.shared_length(None, one)[0] == len(one) - 1
    assert cache.shared_length(None, three)[0] == len(three) - 1
    assert cache.shared_length(None, two)[0] == len(SYSTEM)  # only what it shares with the others is left
    assert PromptCache(limit=0).shared_length(None, one) == (0, None)


def test_the_system_message_is_used_when_no_kept_prompt_covers_it():
    computed: list[list[int]] = []
    cache = PrefixCache(prompt_tokens=1000)

    def compute(ids: list[int], adapter: str | None) -> list[tuple[torch.Tensor, torch.Tensor]]:
        computed.append(ids)
        return states(ids)

    other_role = list(range(1000, 1000 + MIN_PREFIX + 2)) + [7] * 20  # shares 34 tokens, less than the system's 40
    cache.prompts.remember(None, other_role, states(other_role))
    start = cache.start(None, prompt(1, [5]), len(SYSTEM), compute)
    assert computed == [SYSTEM] and start[0][0].shape[2] == len(SYSTEM)
    kept = prompt(1, [5, 6])
    cache.prompts.remember(None, kept, states(kept))
    assert cache.start(None, prompt(1, [5, 8]), len(SYSTEM), compute)[0][0].shape[2] == len(SYSTEM) + 11
    assert computed == [SYSTEM] and cache.prompts.hits == 1
    assert cache.start(None, [1, 2, 3], 0, compute) is None  # no system message, nothing kept to share


def test_rows_admitted_together_wait_for_an_earlier_row_they_share_much_more_with():
    def jobs(*prompts: list[int], adapters: tuple[str | None, ...] | None = None) -> list[GenerationJob]:
        return [GenerationJob(ids, Sampling(), adapter=adapter, prefix_len=len(SYSTEM))
                for ids, adapter in zip(prompts, adapters or (None,) * len(prompts), strict=True)]

    cache = PrefixCache(prompt_tokens=1000)
    first, same, other_source, other_question = prompt(1, [5] * 50), prompt(1, [5] * 50), prompt(1, [6] * 50), \
        prompt(2, [5] * 50)
    # The same prompt waits; one sharing only the question (10 tokens past the system message) does not.
    assert cache.wait_for_earlier(jobs(first, same, other_source, other_question)) == [False, True, False, False]
    assert cache.wait_for_earlier(jobs(first, same, adapters=("a", "b"))) == [False, False]
    assert PrefixCache(prompt_tokens=0).wait_for_earlier(jobs(first, same)) == [False, False]
