"""Pure pieces of the embedded engine: nucleus sampling, JSON closing helpers, the KV batch bookkeeping."""

from __future__ import annotations

import pytest
import torch
from deepresearch.agent.model.embedded.decoding.grammar import closing_reserve, inside_json_string
from deepresearch.agent.model.embedded.decoding.jump_forward import DraftMemo
from deepresearch.agent.model.embedded.decoding.sampling import RowSampler, _restrict_to_nucleus
from deepresearch.agent.model.embedded.engine.kv_batch import HEADROOM, GrowingLayer, KVBatch, left_padded
from deepresearch.agent.model.types import Sampling
from transformers import DynamicCache


def test_nucleus_keeps_the_smallest_top_set_and_renormalises():
    logprobs = torch.log(torch.tensor([0.5, 0.3, 0.15, 0.05]))
    kept = _restrict_to_nucleus(logprobs, 0.75)
    assert torch.isinf(kept[2]) and torch.isinf(kept[3])
    assert kept[:2].exp().tolist() == pytest.approx([0.625, 0.375])
    assert _restrict_to_nucleus(logprobs, 0.4)[1:].isinf().all()  # the top token always stays


def test_sampled_logprob_is_that_of_the_tempered_distribution():
    logits = torch.tensor([2.0, 1.0, 0.0])
    token, logprob = RowSampler(Sampling(temperature=0.5, seed=3)).sample(logits)
    assert logprob == pytest.approx(float(torch.log_softmax(logits / 0.5, dim=-1)[token]))
    assert RowSampler(Sampling()).sample(logits) == (0, pytest.approx(float(torch.log_softmax(logits, -1)[0])))


def test_inside_json_string_counts_unescaped_quotes():
    assert inside_json_string('{"a": "b')
    assert not inside_json_string('{"a": "b"')
    assert inside_json_string('{"a": "say \\"hi')
    assert not inside_json_string('{"a": "x\\\\"')


def test_closing_reserve_grows_with_the_schema_and_never_takes_over_half():
    flat = {"type": "object", "properties": {"tool": {"enum": ["a"]}, "query": {"type": "string"}}}
    nested = {"type": "object", "properties": {"plan": {"type": "array", "items": flat}}}
    assert closing_reserve(flat, 256) == 8 + 6 * 3
    assert closing_reserve(nested, 256) == 8 + 6 * 5
    assert closing_reserve(nested, 20) == 10


def _cache(rows: int, length: int, fill: float) -> DynamicCache:
    cache = DynamicCache()
    cache.layers = [GrowingLayer()]
    cache.update(torch.full((rows, 1, length, 2), fill), torch.full((rows, 1, length, 2), fill), 0)
    return cache


def test_merge_left_pads_and_keep_trims_columns_that_are_padding_everywhere():
    _, mask_a, _ = left_padded([[1, 2, 3, 4, 5]], pad_id=0)
    _, mask_b, positions_b = left_padded([[7, 8], [9]], pad_id=0)
    assert positions_b.tolist() == [[0, 1], [0, 0]]
    batch = KVBatch(_cache(1, 5, 1.0), mask_a, torch.tensor([5]))
    batch.merge(KVBatch(_cache(2, 2, 2.0), mask_b, torch.tensor([2, 1])))
    assert batch.attention_mask.tolist() == [[1, 1, 1, 1, 1], [0, 0, 0, 1, 1], [0, 0, 0, 0, 1]]
    keys = batch.cache.layers[0].keys
    assert keys.shape == (3, 1, 5, 2) and keys[1, 0, :3].abs().sum() == 0 and keys[1, 0, 3:].eq(2.0).all()
    mask, positions = batch.step_inputs()
    assert positions.flatten().tolist() == [5, 2, 1] and mask.shape == (3, 6)
    batch.cache.update(torch.full((3, 1, 1, 2), 3.0), torch.full((3, 1, 1, 2), 3.0), 0)  # the step's forward
    order = batch.keep([1, 2])  # the long row leaves: three leading columns are padding for both survivors
    assert order == [2, 1]  # the last row takes the free slot; row 1 stays where it is
    assert batch.attention_mask.tolist() == [[0, 1, 1], [1, 1, 1]]
    assert batch.cache.layers[0].keys.shape == (2, 1, 3, 2)
    assert batch.next_positions.tolist() == [2, 3]
    assert batch.cache.layers[0].keys[:, 0, :, 0].tolist() == [[2.0, 2.0, 3.0], [2.0, 2.0, 3.0]]


def test_merge_pads_the_shorter_side_whichever_it_is_with_zeros_and_keeps_room_to_grow():
    _, mask_a, _ = left_padded([[1, 2]], pad_id=0)
    _, mask_b, _ = left_padded([[7, 8, 9, 10]], pad_id=0)
    batch = KVBatch(_cache(1, 2, 1.0), mask_a, torch.tensor([2]))
    batch.merge(KVBatch(_cache(1, 4, 2.0), mask_b, torch.tensor([4])))  # the running rows are the shorter
    layer = batch.cache.layers[0]
    for states in (layer.keys, layer.values):
        assert states[:, 0, :, 0].tolist() == [[0.0, 0.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0]]
    batch.step_inputs()
    keys, _ = layer.update(torch.full((2, 1, 1, 2), 3.0), torch.full((2, 1, 1, 2), 3.0))
    assert keys[:, 0, :, 0].tolist() == [[0.0, 0.0, 1.0, 1.0, 3.0], [2.0, 2.0, 2.0, 2.0, 3.0]]


def _numbered_cache(rows: int, length: int) -> DynamicCache:
    """One layer whose key at (row, column) is 100·row + column + 1 (values: its negative)."""
    keys = (torch.arange(rows).view(rows, 1, 1, 1) * 100 + torch.arange(length).view(1, 1, length, 1) + 1.0)
    keys = keys.expand(rows, 1, length, 2).contiguous()
    cache = DynamicCache()
    cache.layers = [GrowingLayer()]
    cache.update(keys, -keys, 0)
    return cache


def test_rows_leave_and_join_in_place_and_every_row_keeps_its_columns():
    mask = torch.ones((4, 3), dtype=torch.long)
    mask[3, 0] = 0  # row 3 is one column shorter
    batch = KVBatch(_numbered_cache(4, 3), mask, torch.tensor([3, 3, 3, 2]))
    layer = batch.cache.layers[0]
    order = batch.keep([0, 2, 3])  # row 1 leaves: row 3 (past the 3 survivors) takes its slot
    assert order == [0, 3, 2]
    assert layer.keys[:, 0, :, 0].tolist() == [[1.0, 2.0, 3.0], [301.0, 302.0, 303.0], [201.0, 202.0, 203.0]]
    assert torch.equal(layer.values, -layer.keys)
    buffer = layer._key_buffer
    order = batch.keep([0, 1])  # the last row leaves; no column is padding for both that stay
    assert order == [0, 1] and batch.attention_mask.tolist() == [[1, 1, 1], [0, 1, 1]]
    order = batch.keep([1])  # the first row leaves: its only own column goes, from the left
    assert order == [1] and batch.attention_mask.tolist() == [[1, 1]]
    assert layer.keys[:, 0, :, 0].tolist() == [[302.0, 303.0]] and layer._key_buffer is buffer  # no copy
    # A shorter group joins into the spare rows, left-padded; then a longer one, into the dead column on
    # the left; then one longer than that room: the one case that copies into new buffers.
    batch.merge(KVBatch(_numbered_cache(1, 1), torch.ones((1, 1), dtype=torch.long), torch.tensor([1])), 8)
    assert layer.keys[:, 0, :, 0].tolist() == [[302.0, 303.0], [0.0, 1.0]] and layer._key_buffer is buffer
    batch.merge(KVBatch(_numbered_cache(1, 3), torch.ones((1, 3), dtype=torch.long), torch.tensor([3])), 8)
    assert layer.keys[:, 0, :, 0].tolist() == [[0.0, 302.0, 303.0], [0.0, 0.0, 1.0], [1.0, 2.0, 3.0]]
    assert layer._key_buffer is buffer and batch.attention_mask.tolist() == [[0, 1, 1], [0, 0, 1], [1, 1, 1]]
    batch.merge(KVBatch(_numbered_cache(1, 5), torch.ones((1, 5), dtype=torch.long), torch.tensor([5])), 8)
    assert layer._key_buffer is not buffer and layer._key_buffer.shape[0] == 8
    assert layer.keys[:, 0, :, 0].tolist() == [
        [0.0, 0.0, 0.0, 302.0, 303.0], [0.0, 0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 2.0, 3.0],
        [1.0, 2.0, 3.0, 4.0, 5.0]]
    assert torch.equal(layer.values, -layer.keys)
    buffer = layer._key_buffer  # it kept room on the left, so a longer prompt joins in place again
    batch.merge(KVBatch(_numbered_cache(1, 6), torch.ones((1, 6), dtype=torch.long), torch.tensor([6])), 8)
    assert layer._key_buffer is buffer and layer.keys[:, 0, 0, 0].tolist() == [0.0, 0.0, 0.0, 0.0, 1.0]
    keys, _ = layer.update(torch.full((5, 1, 1, 2), 9.0), torch.full((5, 1, 1, 2), -9.0))
    assert keys[:, 0, -1, 0].tolist() == [9.0] * 5 and keys.shape == (5, 1, 7, 2)
    assert keys[:, 0, -2, 0].tolist() == [303.0, 1.0, 3.0, 5.0, 6.0]


def test_a_join_reserves_twice_the_rows_not_the_whole_max_batch():
    batch = KVBatch(_numbered_cache(1, 2), torch.ones((1, 2), dtype=torch.long), torch.tensor([2]))
    batch.merge(KVBatch(_numbered_cache(1, 2), torch.ones((1, 2), dtype=torch.long), torch.tensor([2])), 256)
    assert batch.cache.layers[0]._key_buffer.shape[0] == 4
    assert batch.cache.layers[0].keys[:, 0, :, 0].tolist() == [[1.0, 2.0], [1.0, 2.0]]


def test_growing_layer_appends_in_place_and_grows_past_its_headroom():
    layer = GrowingLayer()
    first = torch.randn(2, 3, 5, 4)
    layer.update(first, first.clone())
    steps = [torch.randn(2, 3, 1, 4) for _ in range(HEADROOM + 10)]
    for step in steps:
        keys, values = layer.update(step, step.clone())
    expected = torch.cat([first, *steps], dim=2)
    assert torch.equal(keys, expected) and torch.equal(values, expected)
    assert layer.get_seq_length() == 5 + HEADROOM + 10


def test_a_ragged_step_left_pads_rows_and_a_rejected_draft_becomes_a_hole():
    _, mask, _ = left_padded([[1, 2], [3, 4, 5]], pad_id=0)
    batch = KVBatch(_cache(2, 3, 1.0), mask, torch.tensor([2, 3]))
    mask, positions = batch.step_inputs([3, 1])  # row 0 feeds a token and a 2-token draft, row 1 one token
    assert mask.tolist() == [[0, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 1]]
    assert positions.tolist() == [[2, 3, 4], [3, 3, 3]]  # pad columns repeat a position; they are never seen
    batch.cache.update(torch.full((2, 1, 3, 2), 2.0), torch.full((2, 1, 3, 2), 2.0), 0)
    batch.reject(0, 1)  # the draft's last token was not the model's: out of the cache, position reused
    assert batch.attention_mask[0].tolist() == [0, 1, 1, 1, 1, 0]
    assert batch.next_positions.tolist() == [4, 4]
    assert batch.holes == 2  # six columns, four real ones in each row


def test_compact_moves_each_rows_real_columns_right_and_keeps_their_order():
    mask = torch.tensor([[0, 1, 0, 1, 1, 0], [1, 0, 0, 1, 0, 1]])
    keys = torch.arange(12, dtype=torch.float32).view(2, 1, 6, 1).expand(2, 1, 6, 2).contiguous()
    cache = DynamicCache()
    cache.layers = [GrowingLayer()]
    cache.update(keys, keys + 100, 0)
    batch = KVBatch(cache, mask, torch.tensor([3, 3]))
    batch.compact()
    assert batch.attention_mask.tolist() == [[1, 1, 1], [1, 1, 1]]
    assert batch.cache.layers[0].keys[:, 0, :, 0].tolist() == [[1.0, 3.0, 4.0], [6.0, 9.0, 11.0]]
    assert batch.cache.layers[0].values[:, 0, :, 0].tolist() == [[101.0, 103.0, 104.0], [106.0, 109.0, 111.0]]
    assert batch.next_positions.tolist() == [3, 3]
    uneven = KVBatch(_cache(2, 4, 1.0), torch.tensor([[1, 0, 1, 1], [0, 0, 0, 1]]), torch.tensor([3, 1]))
    uneven.compact()  # the shorter row is left-padded with zeros again
    assert uneven.attention_mask.tolist() == [[1, 1, 1], [0, 0, 1]]
    assert uneven.cache.layers[0].keys[1, 0, :2].abs().sum() == 0


def test_draft_memo_learns_the_models_own_tokenisation_of_a_forced_string():
    texts = {1: "{", 2: '"', 3: "tool", 4: '":', 5: '"search', 6: '{"', 7: '":"'}
    memo = DraftMemo(encode=lambda text: [6, 3, 7], token_text=texts.__getitem__)
    forced = '{"tool":"'
    assert memo.draft(forced) == [6, 3, 7]  # nothing learnt yet: the canonical tokens
    assert not memo.learn(forced, [1, 2, 3])  # not all written yet
    assert memo.learn(forced, [1, 2, 3, 4, 2])
    assert memo.draft(forced) == [1, 2, 3, 4, 2]
    other = DraftMemo(encode=lambda text: [6, 3, 7], token_text=texts.__getitem__)
    assert other.learn(forced, [1, 2, 3, 4, 5])  # '"search' runs past the forced text: only `{"` is kept
    assert other.draft(forced) == [1, 2, 6, 3, 7]  # the learnt `{"`, then the rest canonically


def test_draft_memo_starts_a_new_forced_string_with_a_learnt_key():
    texts = {1: ",", 2: '"', 3: "quote", 4: '":', 10: "Night", 11: " Crawler", 12: '."', 13: "}"}
    encodings = {'"quote":"': [2, 3, 4, 2], 'Night Crawler."}': [10, 11, 12, 13]}
    memo = DraftMemo(encode=lambda text: encodings.get(text, [99]), token_text=texts.__getitem__)
    assert memo.learn(',"quote":"', [1, 2, 3, 4, 2])
    # the only enum value left: the key as the model writes it, the value canonically
    assert memo.draft(',"quote":"Night Crawler."}') == [1, 2, 3, 4, 2, 10, 11, 12, 13]
    assert memo.draft('"quote":"') == [2, 3, 4, 2]


def test_draft_memo_copies_a_forced_string_as_the_prompt_spells_it_and_stops_where_it_departs():
    texts = {1: "Eden", 2: " Valley", 3: " Railway", 4: "\n", 5: "The", 6: '"', 7: "E", 8: "den", 9: " The"}
    memo = DraftMemo(encode=lambda text: [9], token_text=texts.__getitem__)
    prompt = [7, 8, 2, 3, 4, 5]  # "Eden Valley Railway\nThe" in the source text
    context = prompt + [6, 7, 8]  # the row has written '"', "E", "den" of the enum value
    # the enum says "Eden Valley Railway The…": the prompt's tokens as far as they agree, not past "\n"
    assert memo.draft(" Valley Railway The Eden", context) == [2, 3]
    assert memo.draft(" Valley Railway The Eden", [6, 1]) == [9]  # not in the context: canonical


def test_draft_memo_drafts_free_text_from_where_the_context_repeats_its_last_tokens():
    memo = DraftMemo(encode=lambda text: [99], token_text=str)
    prompt = [5, 1, 2, 3, 4, 6, 7, 8, 1, 2, 3, 10, 11]  # "1 2 3" twice: the latest occurrence wins
    assert memo.continuation(prompt + [9, 1, 2, 3]) == [10, 11, 9, 1, 2, 3]
    assert memo.continuation(prompt + [9, 2, 3]) == []  # "2 3" repeats, but a draft needs 3 tokens to match
    assert memo.continuation(prompt + [4, 4, 4]) == []  # nowhere earlier
    assert memo.continuation([1, 2]) == []
    long = list(range(20))
    assert memo.continuation(long + [3, 4, 5]) == list(range(6, 14))  # at most LOOKUP_DRAFT tokens
