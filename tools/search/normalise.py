"""URL normalisation and de-duplication of hits."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from deepresearch.tools.search.types import SearchHit

_TRACKING_PREFIXES = ("utm_", "fbclid", "gclid", "mc_cid", "mc_eid")


def normalise_url(url: str) -> str:
    """A comparison key: lower-case scheme and host, no default port, fragment or tracking parameters."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    port = parts.port if parts.port and (parts.scheme, parts.port) not in {("http", 80), ("https", 443)} else None
    netloc = f"{host}:{port}" if port else host
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query) if not k.lower().startswith(_TRACKING_PREFIXES)])
    path = parts.path.rstrip("/") or "/"
    return urlunsplit((parts.scheme.lower(), netloc, path, query, ""))


def dedupe_hits(hits: list[SearchHit], limit: int) -> list[SearchHit]:
    """Keep the first hit per URL, drop empty URLs, renumber ranks from 1."""
    seen: set[str] = set()
    kept: list[SearchHit] = []
    for hit in hits:
        if not hit.url:
            continue
        key = normalise_url(hit.url)
        if key in seen:
            continue
        seen.add(key)
        kept.append(hit.model_copy(update={"rank": len(kept) + 1}))
        if len(kept) >= limit:
            break
    return kept
