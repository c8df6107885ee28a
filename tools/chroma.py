"""Opening ChromaDB on disk with telemetry off and no embedding function of its own."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def open_collection(directory: Path, name: str) -> Any:
    """A persistent cosine-space collection. Callers always pass embeddings explicitly."""
    os.environ["ANONYMIZED_TELEMETRY"] = "False"
    import chromadb
    from chromadb.config import Settings

    directory.mkdir(parents=True, exist_ok=True)
    client = chromadb.PersistentClient(path=str(directory), settings=Settings(anonymized_telemetry=False))
    # embedding_function=None: Chroma's default would download a model the first time it is used.
    return client.get_or_create_collection(name, embedding_function=None, metadata={"hnsw:space": "cosine"})
