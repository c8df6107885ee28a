"""Where a name of the evidence starts: not at the capitalised ordinary word that opens its unit.

A unit's first word is capitalised whatever it is, so a run of capitalised words at a unit's opening may be an
ordinary word: "New" in "- New bottle deadline: …", or start with one: "Pay" in "Pay Aileen Mbeki (Treasurer) at the
gate", "Email" in "- Email Noor Haddad …". The evidence itself says which words are ordinary: it writes them in lower
case elsewhere, and never capitalises them inside a unit ("Lake" of "the Lake Geneva" stays a name's word).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..document.evidence import EvidenceSentence
from ..language.spans import WORD, Span

# A word written in lower case, hyphens and apostrophes kept ("drop-off"), not the tail of a longer token ("x-ray" in
# "X-ray", "t" in "3t"): WORD would split "drop-off" and count "iPhone".
_LOWER_WORD = re.compile(r"(?<![\w\-])([a-z][a-z'’\-]+)\b")
_INITIALS = re.compile(r"[A-Z]{1,3}")
_INNER_CAPITAL = re.compile(r"\b[a-z][a-z'’\-]*[,;:]?\s+([A-Z][a-z'’\-]+)\b")


def common_words(sentences: Iterable[EvidenceSentence]) -> frozenset[str]:
    """The words the evidence writes in lower case inside its sentences: ordinary words, not names."""
    return frozenset(m.group(1) for s in sentences for m in _LOWER_WORD.finditer(s.text))


def inner_capitals(sentences: Iterable[EvidenceSentence]) -> frozenset[str]:
    """The words (lower-cased) the evidence capitalises after a lower-case word of the same unit: words of names."""
    return frozenset(m.group(1).lower() for s in sentences for m in _INNER_CAPITAL.finditer(s.text))


def without_opening_word(text: str, span: Span, common: frozenset[str], capitals: frozenset[str]) -> Span:
    """The name less the ordinary word that opens its unit ("Pay Aileen Mbeki" → "Aileen Mbeki"): a word the
    evidence writes in lower case and never capitalises inside a unit. The span itself otherwise."""
    if span.kind != "name" or any(w[:1].islower() for w in WORD.findall(text[:span.start])):
        return span
    first, _, rest = span.text.partition(" ")
    word = first.lower()
    if not rest[:1].isupper() or word not in common or word in capitals:
        return span
    return Span(rest, span.kind, span.start + len(first) + 1)


def opening_common_word(text: str, span: Span, common: frozenset[str]) -> bool:
    """A "name" that is only the capitalised opening of a unit: "New" in "- New bottle deadline: …", "OT New" in
    "03/06/24 OT New padlock …" (initials, then an ordinary word). Names stay: "Priya thinks …"."""
    if span.kind != "name" or any(w[:1].islower() for w in WORD.findall(text[:span.start])):
        return False
    words = span.text.split()
    return any(w.lower() in common for w in words) and all(
        w.lower() in common or _INITIALS.fullmatch(w) for w in words)
