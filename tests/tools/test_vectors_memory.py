"""Chroma on disk with the offline MiniLM: fused index search, and remember/recall across toolboxes."""

from __future__ import annotations

import json

from deepresearch.tools.index.build import index_paths
from deepresearch.tools.index.registry import IndexRegistry
from deepresearch.tools.toolbox import build_toolbox

DOCS = [
    ("cars", "Automobiles", "Cars need regular oil changes and tyre rotations to stay in good shape."),
    ("felines", "House cats", "Domestic kittens purr, nap in the sun and chase string."),
    ("oceans", "Pacific", "The Pacific is the largest and deepest of the five oceanic divisions."),
    ("bread", "Sourdough", "Sourdough is leavened with a culture of wild yeast and lactobacilli."),
]


def test_vector_fusion_finds_meaning_bm25_cannot(settings, tmp_path):
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text("\n".join(json.dumps({"id": i, "title": t, "text": x}) for i, t, x in DOCS))
    registry = IndexRegistry(settings)
    index_paths(registry, "vec", [corpus], vectors=True)
    index = registry.open("vec")
    assert index.has_vectors
    # No query word occurs in the documents: only the embedding side can match it.
    assert index.bm25.search("pet animals that meow", 5, index_name="vec") == []
    hits = index.search("pet animals that meow", 2)
    assert hits[0].doc_id == "felines" and hits[0].title == "House cats"
    registry.close()

    reopened = IndexRegistry(settings)  # vectors persist on disk next to the BM25 file
    assert reopened.open("vec").search("vehicle maintenance", 1)[0].doc_id == "cars"
    (tmp_path / "docs.jsonl").write_text(json.dumps({"id": "bread", "title": "Sourdough", "text": DOCS[3][2]}))
    index_paths(reopened, "vec", [corpus], vectors=True)  # three documents removed from the source
    vectors = reopened.open("vec")._vector_store()
    assert vectors.count() == 1
    reopened.close()


async def test_memory_is_recalled_by_a_later_toolbox_and_reaches_user_files(settings, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "trip.md").write_text("# Trip\n\nThe ferry to Staffa leaves Oban at nine and reaches Fingal's Cave.")
    registry = IndexRegistry(settings)
    index_paths(registry, "notes", [notes])
    registry.close()

    first = build_toolbox(settings, offline=True)
    stored = await first.invoke("remember", {"text": "The Eiffel Tower was finished in 1889.", "source": "local://w/1"})
    assert stored.ok and stored.output["stored"] is True
    again = await first.invoke("remember", {"text": "The Eiffel  Tower was finished in 1889.", "source": "local://w/1"})
    assert again.output["stored"] is False and again.output["memories"] == 1
    await first.close()

    later = build_toolbox(settings, offline=True)  # a new run: memory comes from disk
    recalled = await later.invoke("recall", {"query": "When was the Paris tower completed?"})
    assert recalled.ok, recalled.error
    memories = recalled.output["memories"]
    assert memories[0]["text"].startswith("The Eiffel Tower") and memories[0]["source"] == "local://w/1"
    files = await later.invoke("recall", {"query": "ferry to Staffa"})
    assert files.output["documents"][0]["url"] == "local://notes/notes/trip.md"
    assert "Fingal" in later.source_text(files.output["documents"][0]["url"])
    bad = await later.invoke("remember", {"text": "", "source": "x"})
    assert bad.error_kind == "bad_args"
    await later.close()
