"""The document shapes the index stores and returns."""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, Field


class SourceDoc(BaseModel):
    """A document on its way into an index (from a JSONL line or a user file)."""

    id: str = Field(min_length=1)
    title: str = ""
    text: str
    url: str | None = Field(None, description="where it came from (a file path or web URL), when known")

    @property
    def content_hash(self) -> str:
        # Title and text both matter: a renamed page is a changed document.
        digest = hashlib.sha256()
        digest.update(self.title.encode())
        digest.update(b"\0")
        digest.update(self.text.encode())
        return digest.hexdigest()


class StoredDoc(BaseModel):
    id: str
    title: str
    text: str
    url: str | None = None
    source: str
    content_hash: str


class IndexHit(BaseModel):
    doc_id: str
    title: str
    snippet: str
    score: float
    rank: int
    index: str


class SyncReport(BaseModel):
    """What one incremental indexing pass changed."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: list[str] = Field(default_factory=list, description="inputs that could not be read, with why")
