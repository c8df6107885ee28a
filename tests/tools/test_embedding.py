"""The embedder runs the shipped MiniLM itself; its vectors must be sentence-transformers' own, so indexes
and memories written by either stay searchable."""

from __future__ import annotations

import json
import shutil

import numpy as np
from deepresearch.tools import embedding
from deepresearch.tools.embedding import Embedder, default_model_dir

TEXTS = ["hello world", "Aphra Behn died in 1689. " * 40, "Ölüdeniz — a beach", "x" * 5000, "The City Heiress"]


def reference(model_dir, texts):
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
    return model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)


def test_vectors_are_sentence_transformers_own():
    embedder = Embedder()
    assert isinstance(embedding._load(embedder.model_dir), embedding._Encoder)  # the fast path, not the fallback
    ours = np.array(embedder.embed(TEXTS))
    # The text beyond 256 tokens is cut the same way (the long texts would differ otherwise).
    assert np.abs(ours - reference(embedder.model_dir, [t[:2000] for t in TEXTS])).max() < 1e-5
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_a_pipeline_it_does_not_run_goes_to_sentence_transformers(tmp_path):
    assert embedding._pipeline(default_model_dir()) == ("mean", 256)
    folder = tmp_path / "model"
    shutil.copytree(default_model_dir(), folder)
    modules = json.loads((folder / "modules.json").read_text())
    dense = {"idx": 3, "name": "3", "path": "3_Dense", "type": "sentence_transformers.models.Dense"}
    (folder / "modules.json").write_text(json.dumps([*modules, dense]))
    assert embedding._pipeline(folder) is None
    (folder / "modules.json").write_text(json.dumps(modules))
    pooling = json.loads((folder / "1_Pooling" / "config.json").read_text())
    pooling.update(pooling_mode_mean_tokens=False, pooling_mode_max_tokens=True)
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    assert embedding._pipeline(folder) is None
    assert isinstance(embedding._load(folder), embedding._SentenceTransformerEncoder)


def test_a_transformer_other_than_plain_bert_goes_to_sentence_transformers(tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(default_model_dir(), folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "hidden_act": "gelu_new"}))
    assert embedding._pipeline(folder) == ("mean", 256)  # the pipeline is plain, the network is not ours
    assert isinstance(embedding._load(folder), embedding._SentenceTransformerEncoder)
