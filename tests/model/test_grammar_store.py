"""Compiled grammars kept on disk for the next process (embedded/decoding/grammar_store.py's GrammarStore): a
grammar read back constrains exactly as the compiled one; keyed by tokenizer file and schema; quick schemas are not
written; a damaged or unwritable store is a miss, never an error."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
import torch
from deepresearch.agent.graph.schemas import plan_schema
from deepresearch.agent.model.embedded.decoding.grammar import GrammarCache, allocate_bitmask
from deepresearch.agent.model.embedded.decoding.grammar_store import GrammarStore

# The planner's schema: its pattern-constrained query compiles to a large automaton (~0.5 s).
SCHEMA = plan_schema(["search", "open"], 3)
TEXT = '{"steps":[{"tool":"search","query":"Aphra Behn"}]}'


@pytest.fixture(scope="module")
def tokenizer_dir(model_dir: Path, tmp_path_factory) -> Path:
    """A copy of the model's tokenizer, so a test can change the file without touching the real one."""
    copy = tmp_path_factory.mktemp("tokenizer")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(model_dir / name, copy / name)
    return copy


@pytest.fixture(scope="module")
def tokenizer(tokenizer_dir: Path):
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast.from_pretrained(tokenizer_dir)


def store_at(tmp_path: Path, tokenizer_dir: Path, min_compile_s: float = 0.0) -> GrammarStore:
    return GrammarStore(tmp_path / "grammars", tokenizer_dir / "tokenizer.json", vocab_size=49152,
                        min_compile_s=min_compile_s)


def masks(cache: GrammarCache, tokenizer, text: str) -> list[torch.Tensor]:
    """The allowed-token bitmask before each token of `text`, as the engine fills it."""
    row = cache.matcher(cache.compile(SCHEMA))
    out = []
    for token in tokenizer(text, add_special_tokens=False)["input_ids"]:
        bitmask = allocate_bitmask(1, cache.vocab_size)
        row.fill_mask(bitmask, 0)
        out.append(bitmask.clone())
        assert row.accept(token)
    return out


def test_a_stored_grammar_constrains_exactly_as_the_compiled_one(tmp_path, tokenizer, tokenizer_dir):
    plain = masks(GrammarCache(tokenizer, 49152), tokenizer, TEXT)
    first = GrammarCache(tokenizer, 49152, store=store_at(tmp_path, tokenizer_dir))
    assert [torch.equal(a, b) for a, b in zip(masks(first, tokenizer, TEXT), plain, strict=True)] == [True] * len(plain)
    files = sorted(p.name.split("-")[0] for p in (tmp_path / "grammars").iterdir())
    assert files == ["schema", "tokenizer"]

    store = store_at(tmp_path, tokenizer_dir)
    next_process = GrammarCache(tokenizer, 49152, store=store)
    assert [torch.equal(a, b) for a, b in zip(masks(next_process, tokenizer, TEXT), plain, strict=True)] == (
        [True] * len(plain))
    assert store.loaded == 1


def test_a_quick_schema_is_not_written_and_another_tokenizer_file_misses(tmp_path, tokenizer, tokenizer_dir):
    cache = GrammarCache(tokenizer, 49152, store=store_at(tmp_path, tokenizer_dir, min_compile_s=60.0))
    cache.compile(SCHEMA)
    assert not list((tmp_path / "grammars").glob("schema-*"))

    GrammarCache(tokenizer, 49152, store=store_at(tmp_path, tokenizer_dir)).compile(SCHEMA)
    (tokenizer_dir / "tokenizer.json").touch()  # another mtime: another tokenizer as far as the key knows
    store = store_at(tmp_path, tokenizer_dir)
    GrammarCache(tokenizer, 49152, store=store).compile(SCHEMA)
    assert store.loaded == 0


def test_a_damaged_file_or_an_unwritable_store_is_a_miss(tmp_path, tokenizer, tokenizer_dir, caplog):
    GrammarCache(tokenizer, 49152, store=store_at(tmp_path, tokenizer_dir)).compile(SCHEMA)
    for path in (tmp_path / "grammars").iterdir():
        path.write_text('{"not": "a grammar"')
    store = store_at(tmp_path, tokenizer_dir)
    with caplog.at_level(logging.WARNING):
        cache = GrammarCache(tokenizer, 49152, store=store)
        plain = masks(GrammarCache(tokenizer, 49152), tokenizer, TEXT)
        assert all(torch.equal(a, b) for a, b in zip(masks(cache, tokenizer, TEXT), plain, strict=True))
    assert store.loaded == 0 and "ignoring unreadable grammar cache file" in caplog.text

    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the store's directory would be")
    unwritable = GrammarStore(blocked / "grammars", tokenizer_dir / "tokenizer.json", vocab_size=49152,
                              min_compile_s=0.0)
    with caplog.at_level(logging.WARNING):
        GrammarCache(tokenizer, 49152, store=unwritable).compile(SCHEMA)
    assert "cannot write the grammar cache" in caplog.text
