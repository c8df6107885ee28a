"""Turn a natural-language question into an FTS5 query.

Questions are long and full of function words; an AND of every word finds nothing and an OR of every
word is slow and noisy. So: keep word tokens, drop English stop words, quote each token (so FTS5
syntax characters in the question cannot change the query), and OR them; BM25 does the ranking.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_TERMS = 32

STOP_WORDS = frozenset((
    "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at",
    "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did",
    "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have",
    "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into",
    "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of",
    "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she",
    "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then",
    "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was",
    "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would",
    "you", "your", "yours", "yourself", "yourselves", "also", "whose", "known", "called", "name", "named"
))


def query_terms(text: str) -> list[str]:
    """Distinct lower-cased word tokens without stop words (stop words kept if nothing else is left)."""
    words = [w.lower() for w in _WORD.findall(text)]
    seen: dict[str, None] = {}
    for word in words:
        if word not in STOP_WORDS:
            seen.setdefault(word, None)
    if not seen:  # a query of only stop words ("The Who") still deserves an answer
        for word in words:
            seen.setdefault(word, None)
    return list(seen)[:MAX_TERMS]


def fts_or_expression(terms: list[str]) -> str:
    """An FTS5 MATCH expression that matches any of the (already tokenised) terms."""
    return " OR ".join(f'"{term}"' for term in terms)
