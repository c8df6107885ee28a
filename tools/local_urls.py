"""Stable URLs for documents in a local index: local://INDEX/DOC_ID (resolved with no network)."""

from __future__ import annotations

from urllib.parse import quote, unquote, urlsplit

SCHEME = "local"


def local_url(index: str, doc_id: str) -> str:
    return f"{SCHEME}://{index}/{quote(doc_id, safe='/-._~')}"


def parse_local_url(url: str) -> tuple[str, str] | None:
    """(index, doc_id) of a local:// URL, or None if it is not one."""
    parts = urlsplit(url)
    if parts.scheme != SCHEME or not parts.netloc or len(parts.path) < 2:
        return None
    return parts.netloc, unquote(parts.path[1:])


def local_doc_id(url: str) -> str | None:
    """The corpus doc id of a local:// URL (None for any other URL)."""
    local = parse_local_url(url)
    return local[1] if local is not None else None
