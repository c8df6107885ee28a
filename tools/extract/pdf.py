"""PDF to text with pypdf."""

from __future__ import annotations

import io
import logging

from pypdf import PdfReader
from pypdf.errors import PdfReadError


class PdfError(ValueError):
    pass


def pdf_to_text(data: bytes, *, max_chars: int | None = None) -> tuple[str, str]:
    """(title, text) of a PDF; pages are separated by blank lines. Raises PdfError when unreadable."""
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # malformed PDFs warn loudly on every page
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            reader.decrypt("")
        title = str((reader.metadata or {}).get("/Title") or "").strip()
        parts: list[str] = []
        total = 0
        for page in reader.pages:
            text = (page.extract_text() or "").strip()
            parts.append(text)
            total += len(text)
            if max_chars is not None and total >= max_chars:
                break
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        raise PdfError(f"not a readable PDF: {exc}") from None
    text = "\n\n".join(p for p in parts if p)
    return title, text[:max_chars] if max_chars is not None else text
