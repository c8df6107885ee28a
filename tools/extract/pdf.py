"""PDF to text with pypdf (imported on first use: ~0.15 s of every start-up otherwise).

Also a script (standard library and pypdf only): `python -I pdf.py MAX_CHARS` reads a PDF on stdin and
writes {"title", "text"} or {"error"} as JSON on stdout, so a caller with a deadline can parse in a process
it can kill (pdf_process.py): a small PDF can take minutes of pypdf's time.
"""

from __future__ import annotations

import io
import json
import logging
import struct
import sys
import zlib

# What a malformed or hostile PDF makes pypdf raise besides its own PyPdfError (which covers
# LimitReachedError, a stream that inflates past pypdf's output limit: a decompression bomb, as well as
# PdfReadError): the parser meeting objects of the wrong type or shape.
UNREADABLE_PDF = (ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError, zlib.error, struct.error)


class PdfError(ValueError):
    pass


def _page_text(page: object) -> str:
    """A page's text with its layout kept long enough to find its tables (rows become pipe rows); a page the
    layout reader cannot handle is read plainly."""
    from deepresearch.tools.extract.tables import layout_tables_as_rows

    try:
        laid_out = page.extract_text(extraction_mode="layout")  # type: ignore[attr-defined]
    except (*UNREADABLE_PDF, ZeroDivisionError):
        return (page.extract_text() or "").strip()  # type: ignore[attr-defined]
    return layout_tables_as_rows(laid_out or "").strip()


def pdf_to_text(data: bytes, *, max_chars: int | None = None) -> tuple[str, str]:
    """(title, text) of a PDF; pages are separated by blank lines. Raises PdfError when unreadable."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # malformed PDFs warn loudly on every page
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            reader.decrypt("")
        title = str((reader.metadata or {}).get("/Title") or "").strip()
        parts: list[str] = []
        total = 0
        for page in reader.pages:
            text = _page_text(page)
            parts.append(text)
            total += len(text)
            if max_chars is not None and total >= max_chars:
                break
    except (PyPdfError, *UNREADABLE_PDF) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise PdfError(f"not a readable PDF ({type(exc).__name__}: {reason})") from None
    text = "\n\n".join(p for p in parts if p)
    return title, text[:max_chars] if max_chars is not None else text


def _main() -> int:
    import ctypes
    import signal

    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: the caller died, stop parsing
    max_chars = int(sys.argv[1]) if sys.argv[1:] and sys.argv[1] != "-" else None
    try:
        title, text = pdf_to_text(sys.stdin.buffer.read(), max_chars=max_chars)
        answer: dict[str, str] = {"title": title, "text": text}
    except PdfError as exc:
        answer = {"error": str(exc)}
    sys.stdout.write(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(_main())
