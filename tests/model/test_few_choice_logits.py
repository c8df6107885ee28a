"""Few-choice logits (embedded/decoding/step_logits.py): the columns that check a forced draft skip the vocabulary
projection and are projected, once the grammar's mask is known, on the allowed tokens alone — with the real
SmolLM2-135M."""

from __future__ import annotations

from typing import Any

import pytest
import torch
import xgrammar as xgr
from deepresearch.agent.model.embedded.decoding.grammar import allowed_tokens
from deepresearch.agent.model.embedded.decoding.step_logits import few_columns, masked_column
from deepresearch.agent.model.embedded.engine.kv_batch import KVBatch, new_cache
from deepresearch.agent.model.embedded.layers.forward import LeanForward
from deepresearch.agent.model.types import Sampling

from .test_jump_forward import ENUM_CASES, all_requests, extractor_request


def test_allowed_tokens_are_the_ones_xgrammars_mask_leaves(embedded):
    matcher = xgr.GrammarMatcher(embedded._grammars.compile(ENUM_CASES[0].json_schema))  # {"quote": enum}
    vocab = embedded._engine.forward.lean._head.weight().shape[0]
    bitmask = xgr.allocate_token_bitmask(1, vocab)
    counts = []
    for text in ('{', '"qu', 'ote":', '"The A', 'mazon'):  # each mask after the text before it
        matcher.fill_next_token_bitmask(bitmask, 0)
        logits = torch.zeros((1, vocab))
        xgr.apply_token_bitmask_inplace(logits, bitmask)
        expected = torch.isfinite(logits[0]).nonzero().squeeze(1)
        assert torch.equal(allowed_tokens(bitmask[0], vocab), expected)
        counts.append(len(expected))
        assert matcher.accept_string(text)
    assert all(0 < n < vocab for n in counts) and min(counts) < 10, counts  # inside the key: a few


@torch.inference_mode()
def test_a_few_column_projected_on_some_tokens_gives_their_whole_projection_logits(hf_model):
    torch.manual_seed(0)
    lean = LeanForward(hf_model)
    feeds = [torch.randint(10, 40_000, (12,)).tolist(), torch.randint(10, 40_000, (7,)).tolist()]
    keep = 5
    few = torch.zeros((2, keep), dtype=torch.bool)
    few[0, 1:4] = True
    few[1, 2:4] = True

    def step(**kwargs: Any) -> Any:
        kv = KVBatch(new_cache(hf_model.config.num_hidden_layers), torch.zeros((2, 0), dtype=torch.long),
                     torch.zeros(2, dtype=torch.long))
        ids = torch.zeros((2, 12), dtype=torch.long)
        for i, feed in enumerate(feeds):  # left-padded: row 1 is ragged
            ids[i, 12 - len(feed) :] = torch.tensor(feed)
        mask, positions = kv.step_inputs(list(map(len, feeds)))
        return lean.step(ids, mask, positions, kv.cache, keep, **kwargs)

    whole, part = step(), step(few=few)
    tokens = torch.tensor([5, 900, 17_000, 49_151])
    for row, column in few.nonzero().tolist():
        assert part.is_few(row, column) and not whole.is_few(row, column)
        expected = whole.column(row, column)
        got = part.of_tokens(row, column, tokens)
        assert torch.allclose(got[tokens], expected[tokens], atol=1e-4)
        assert torch.isinf(got).sum() == len(got) - len(tokens)
        assert torch.allclose(part.column(row, column), expected, atol=1e-4)  # all of it, when asked
    for row, column in (~few).nonzero().tolist():
        if (row, column) != (1, 0) and (row, column) != (1, 1):  # not padding: row 1 feeds 7 of 12 columns
            assert torch.equal(part.column(row, column), whole.column(row, column))


async def test_verified_decoding_projects_few_columns_and_decodes_as_with_whole_projections(embedded):
    """The engine marks the columns of forced drafts as few; with them, greedy and seeded sampling give the
    tokens and log-probabilities of every column projected on the whole vocabulary."""
    engine = embedded._engine
    forward = engine.forward
    original = forward.step
    few_columns: list[int] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        few = args[6] if len(args) > 6 else kwargs.get("few")
        few_columns.append(0 if few is None else int(few.sum()))
        return original(*args, **kwargs)

    sampled = extractor_request()
    sampled.sampling = Sampling(temperature=0.8, seed=7, max_tokens=384)
    requests = [*all_requests(), sampled]
    forward.step = spy
    try:
        with_few = await embedded.chat_many(requests)
        few_then, few_columns[:] = sum(few_columns), []
        engine.few_choice_logits = False
        embedded.clear_prefix_cache()
        with_whole = await embedded.chat_many(requests)
    finally:
        engine.few_choice_logits = True
        del forward.step
    assert few_then > 20 and sum(few_columns) == 0  # forced drafts were checked on few columns, then on none
    for few, whole in zip(with_few, with_whole, strict=True):
        assert few.completion_token_ids == whole.completion_token_ids, (few.text, whole.text)
        assert few.logprobs == pytest.approx(whole.logprobs, abs=1e-3)
        assert few.parsed is not None


def test_few_columns_are_the_columns_that_check_a_forced_draft():
    assert few_columns([0, 0], 3) is None
    assert few_columns([2, 0, 1], 3).tolist() == [[True, True, False], [False, False, False],
                                                  [False, True, False]]


class _Allowing:
    """A grammar at a point where it allows `tokens` (as RowGrammar.fill_mask fills a bitmask row)."""

    def __init__(self, tokens: list[int]) -> None:
        self.tokens = tokens

    def fill_mask(self, bitmask: torch.Tensor, row: int) -> None:
        bitmask[row] = 0
        for token in self.tokens:
            word, bit = divmod(token, 32)
            bitmask[row, word] |= torch.tensor(1 << bit, dtype=torch.int64).to(torch.int32)


@torch.inference_mode()
@pytest.mark.parametrize("few_choices", [256, 2])  # the allowed tokens projected alone; too many: the whole row
def test_a_masked_few_column_has_the_whole_projections_logits_on_the_allowed_tokens(hf_model, monkeypatch,
                                                                                       few_choices):
    from deepresearch.agent.model.embedded.decoding import step_logits

    monkeypatch.setattr(step_logits, "FEW_CHOICES", few_choices)
    lean, vocab = LeanForward(hf_model), hf_model.config.vocab_size
    kv = KVBatch(new_cache(hf_model.config.num_hidden_layers), torch.zeros((1, 0), dtype=torch.long),
                 torch.zeros(1, dtype=torch.long))
    ids = torch.tensor([[1, 504, 2120, 28, 31, 4300]])
    mask, positions = kv.step_inputs([6])
    step = lean.step(ids, mask, positions, kv.cache, 3, few=torch.tensor([[True, True, False]]))
    whole = lean(ids, mask, positions, new_cache(hf_model.config.num_hidden_layers), 3)
    allowed = [31, 32, 9001]  # bit 31 of a word is its sign bit
    bitmask = xgr.allocate_token_bitmask(1, vocab)
    got = masked_column(step, 0, 1, _Allowing(allowed), bitmask)
    assert torch.isfinite(got).nonzero().squeeze(1).tolist() == allowed
    assert torch.allclose(got[allowed], whole[0, 1, allowed], atol=1e-4)
