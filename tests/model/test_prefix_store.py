"""Prefix keys/values kept on disk for the next process (embedded/engine/prefix_cache.py's PrefixStore): exact
round trips, keyed by weights, computation and token ids; an adapter's never stored; a damaged or unwritable store is a
miss, never an error."""

from __future__ import annotations

import logging
from pathlib import Path

import torch
from deepresearch.agent.model.embedded.engine import prefix_cache
from deepresearch.agent.model.embedded.engine.prefix_cache import PrefixCache, PrefixStore

IDS = [11, 12, 13, 14, 15]


def states(length: int = len(IDS), layers: int = 2) -> list[tuple[torch.Tensor, torch.Tensor]]:
    return [(torch.randn(1, 3, length, 4), torch.randn(1, 3, length, 4)) for _ in range(layers)]


def store_at(tmp_path: Path, computed_by: str = "lean forward, 2 threads") -> PrefixStore:
    weights = tmp_path / "model.safetensors"
    if not weights.exists():
        weights.write_bytes(b"weights")
    return PrefixStore(tmp_path / "store", weights, computed_by=computed_by)


def test_a_stored_prefix_comes_back_exactly_for_the_same_weights_computation_and_ids(tmp_path):
    saved = states()
    assert store_at(tmp_path).load(IDS) is None
    store_at(tmp_path).save(IDS, saved)
    loaded = store_at(tmp_path).load(IDS)
    assert loaded is not None and len(loaded) == len(saved)
    assert all(torch.equal(a, b) for pair, again in zip(saved, loaded, strict=True)
               for a, b in zip(pair, again, strict=True))
    assert store_at(tmp_path, computed_by="transformers forward, 2 threads").load(IDS) is None
    assert store_at(tmp_path).load([*IDS[:-1], 99]) is None
    (tmp_path / "model.safetensors").write_bytes(b"new weights")  # reconverted: other size and mtime
    assert store_at(tmp_path).load(IDS) is None


def test_the_cache_reads_and_writes_the_store_for_the_base_model_only(tmp_path):
    computed: list[str | None] = []

    def compute(adapter: str | None):
        computed.append(adapter)
        return states()

    first = PrefixCache(store=store_at(tmp_path))
    first.states(None, IDS, lambda: compute(None))
    next_process = PrefixCache(store=store_at(tmp_path))
    next_process.states(None, IDS, lambda: compute(None))
    assert computed == [None] and next_process.loaded == 1
    next_process.states("policy", IDS, lambda: compute("policy"))  # an adapter's prefix: computed, not stored
    assert computed == [None, "policy"]
    assert len(list((tmp_path / "store").glob("*.safetensors"))) == 1


def test_a_damaged_file_or_an_unwritable_store_is_a_miss(tmp_path, caplog):
    store = store_at(tmp_path)
    store.save(IDS, states())
    (file,) = (tmp_path / "store").glob("*.safetensors")
    file.write_bytes(b"not a safetensors file")
    with caplog.at_level(logging.WARNING):
        assert store.load(IDS) is None
    assert "unreadable prefix cache file" in caplog.text
    store.save(IDS, states(length=3))  # the wrong length for these ids
    assert store.load(IDS) is None
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the store's directory should be")
    unwritable = PrefixStore(blocked, tmp_path / "model.safetensors", computed_by="lean forward, 2 threads")
    unwritable.save(IDS, states())  # logged, not raised
    assert unwritable.load(IDS) is None
    assert PrefixCache(store=unwritable).states(None, IDS, states) is not None


def test_the_store_keeps_its_most_recently_written_files(tmp_path, monkeypatch):
    monkeypatch.setattr(prefix_cache, "STORE_LIMIT", 2)
    store = store_at(tmp_path)
    for first in (1, 2, 3):
        store.save([first, *IDS], states(length=len(IDS) + 1))
    assert len(list((tmp_path / "store").glob("*.safetensors"))) == 2
    assert store.load([1, *IDS]) is None and store.load([3, *IDS]) is not None
