"""Links between units: how much of the question a chain through a shared name covers.

A multi-hop answer stands in a unit that does not say what the question asks about; another source's unit does,
and names the same thing: "Boden's Boy … directed by Henry Edwards" and "Henry Edwards … was born in
Weston-super-Mare"; "Agreed to stock the KMC X11-93 as our standard 11-speed chain" and the inventory row
"| KMC | X11-93 | … | 18.40 |". A candidate's `link` is the largest share of the question's words that another
source's units naming one of the names of the candidate's unit (not the candidate itself, not a name the question
gives) add to what the candidate's unit covers itself. Names are the units' capitalised runs and codes
(spans.name_spans), matched by their parts too ("KMC X11-93" meets the cell "X11-93").

trust/relevance.py follows the same kind of chain to decide whether a unit is about the question at all (idf-weighted,
whole names, a source's title as a name). As a ranker feature that reading did worse (pool train top-1 over 800
questions, simulated evidence: 116 without a link feature, 120 with the relevance chain's gain, 123 with this one):
whole names miss a row's cells, and the question-name rule makes every unit of a hop's source gain alike.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..document.evidence import EvidenceSentence
from ..language.spans import GENERIC_NAMES, WORD, name_spans
from ..language.words import content_words, stem
from .structure import context_stems


def _keys(text: str) -> set[str]:
    """A name's keys: the whole name and each of its parts that is a code or a long word ("KMC X11-93" → the
    name, "x11-93"; a row's cell "X11-93" then meets it)."""
    whole = " ".join(m.group().lower() for m in WORD.finditer(text))
    parts = {p.lower().strip(".,;:*()\"'") for p in text.split()}
    return {whole} | {p for p in parts if any(c.isdigit() for c in p) or len(p) >= 5}


class Links:
    """Per unit: the question's words it covers and its names' keys; per key, the units naming it."""

    def __init__(self, sentences: Sequence[EvidenceSentence], q_stems: set[str], common: frozenset[str]):
        self.size = len(q_stems)
        self.covers: list[frozenset[str]] = []
        self.names: list[set[str]] = []
        self.naming: dict[str, dict[str, frozenset[str]]] = {}  # key -> url -> the question words its units naming
        # the key cover together
        for sent in sentences:
            words = {stem(w) for w in content_words(f"{sent.text} {sent.title}")} | context_stems(sent)
            cover = frozenset(words & q_stems)
            keys: set[str] = set()
            for span in name_spans(sent.text):
                span_stems = {stem(w) for w in content_words(span.text)}
                if span.text.lower() in GENERIC_NAMES or span.text.lower() in common or (
                        span_stems and span_stems <= q_stems):
                    continue
                keys |= _keys(span.text)
            self.covers.append(cover)
            self.names.append(keys)
            for key in keys:
                by_url = self.naming.setdefault(key, {})
                by_url[sent.url] = by_url.get(sent.url, frozenset()) | cover

    def link(self, index: int, url: str, candidate: str) -> float:
        """The share of the question's words that a unit of another source, naming a name of unit `index` (the
        candidate's own aside), adds to what unit `index` covers itself."""
        if not self.size:
            return 0.0
        own, cover = _keys(candidate), self.covers[index]
        best = 0
        for key in self.names[index] - own:
            if any(key in o or o in key for o in own):
                continue
            for other, words in self.naming.get(key, {}).items():
                if other != url:
                    best = max(best, len(words - cover))
        return best / self.size
