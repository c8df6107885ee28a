"""Read a user file (text, markdown, HTML, PDF, CSV) as (title, text)."""

from __future__ import annotations

import re
from pathlib import Path

from deepresearch.tools.extract.html import html_to_text
from deepresearch.tools.extract.pdf import PdfError, pdf_to_text
from deepresearch.tools.extract.tables import csv_to_text

TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".rst", ".text"})
HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml"})
PDF_SUFFIXES = frozenset({".pdf"})
TABLE_SUFFIXES = frozenset({".csv", ".tsv"})
SUPPORTED_SUFFIXES = TEXT_SUFFIXES | HTML_SUFFIXES | PDF_SUFFIXES | TABLE_SUFFIXES

_MD_HEADING = re.compile(r"^\s{0,3}#\s+(.+?)\s*#*\s*$", re.MULTILINE)


class UnreadableFile(ValueError):
    """The file is of an unsupported kind, binary, too large or corrupt; the message says which."""


def _decode_text(data: bytes, path: Path) -> str:
    if b"\0" in data[:8192]:
        raise UnreadableFile(f"{path}: binary file, not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def read_user_file(path: Path, *, max_bytes: int) -> tuple[str, str]:
    """(title, text) of a supported file. Raises UnreadableFile with a one-line reason."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise UnreadableFile(f"{path}: unsupported file type '{suffix or path.name}' (text, md, html, pdf, csv)")
    size = path.stat().st_size
    if size > max_bytes:
        raise UnreadableFile(f"{path}: {size} bytes is over the {max_bytes}-byte limit")
    data = path.read_bytes()
    if suffix in PDF_SUFFIXES:
        try:
            title, text = pdf_to_text(data)
        except PdfError as exc:
            raise UnreadableFile(f"{path}: {exc}") from None
        return title or path.stem, text
    raw = _decode_text(data, path)
    if suffix in TABLE_SUFFIXES:
        return path.stem, csv_to_text(raw)
    if suffix in HTML_SUFFIXES:
        title, text = html_to_text(raw, path.resolve().as_uri())
        return title or path.stem, text
    heading = _MD_HEADING.search(raw) if suffix in {".md", ".markdown"} else None
    return (heading.group(1) if heading else path.stem), raw
