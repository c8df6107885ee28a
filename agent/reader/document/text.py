"""Text handling for evidence: its units as strings, normalisation, and locating a quote in a source."""

from __future__ import annotations

import re
import unicodedata

from .units import read_units

_WORD = re.compile(r"\w+", re.UNICODE)


def split_sentences(text: str) -> list[str]:
    """The reading units of a text as strings: sentences of prose, table rows, items, log lines (units.py)."""
    return [u.text for u in read_units(text)]


def without_disambiguation(title: str) -> str:
    """A page title's name without its trailing disambiguation: "The Wild (film)" → "The Wild"."""
    return re.sub(r"\s*\([^)]*\)\s*$", "", title)


def normalise(text: str) -> str:
    """Case-, accent-, punctuation- and whitespace-insensitive form used to match quotes."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return " ".join(_WORD.findall(text.lower()))


def locate(quote: str, source_text: str) -> tuple[int, int] | None:
    """Character offsets of `quote` in `source_text`, exact first, then whitespace-insensitive."""
    idx = source_text.find(quote)
    if idx >= 0:
        return idx, idx + len(quote)
    words = quote.split()
    if not words:
        return None
    pattern = r"\s+".join(re.escape(w) for w in words)
    m = re.search(pattern, source_text)
    return (m.start(), m.end()) if m else None


def quote_supported(quote: str, source_text: str) -> bool:
    """The citation check: the quote occurs in the source once both are normalised."""
    q = normalise(quote)
    return bool(q) and q in normalise(source_text)


def overlap(a: str, b: str) -> float:
    """Share of a's content words found in b (rough relevance, used to rank sentences)."""
    wa = {w for w in normalise(a).split() if len(w) > 2}
    if not wa:
        return 0.0
    wb = set(normalise(b).split())
    return len(wa & wb) / len(wa)


def best_sentences(text: str, query: str, k: int) -> list[str]:
    """The k sentences of a source that share most words with the query, in source order."""
    sents = split_sentences(text)
    if len(sents) <= k:
        return sents
    ranked = sorted(range(len(sents)), key=lambda i: (-overlap(query, sents[i]), i))[:k]
    return [sents[i] for i in sorted(ranked)]
