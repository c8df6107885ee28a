"""Split long text into overlapping chunks with character offsets, so a citation can point into a page."""

from __future__ import annotations

from pydantic import BaseModel


class Chunk(BaseModel):
    index: int
    start: int
    end: int


def chunk_offsets(text: str, size: int, overlap: int) -> list[Chunk]:
    """Chunks of about `size` characters ending at a paragraph or sentence break when one is near."""
    if not text:
        return []
    overlap = min(overlap, size // 2)
    chunks: list[Chunk] = []
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            window_from = start + size // 2
            for sep in ("\n\n", "\n", ". "):
                cut = text.rfind(sep, window_from, end)
                if cut != -1:
                    end = cut + len(sep)
                    break
        chunks.append(Chunk(index=len(chunks), start=start, end=end))
        if end >= len(text):
            break
        start = max(end - overlap, start + 1)
    return chunks
