"""Turn a natural-language question into an FTS5 query.

Questions are long and full of function words; an AND of every word finds nothing and an OR of every
word is slow and noisy. So: keep word tokens, drop English stop words, quote each token (so FTS5
syntax characters in the question cannot change the query), and OR them; BM25 does the ranking.
Names of two or more capitalised words ("The City Heiress") are added as phrases too, so a document
that has the name as a whole outranks ones that share its words only one by one: in the bundled demo,
"…who wrote The City Heiress die?" ranked German titles ("Die Ausnahme und die Regel") above the play.
On the 1,666 pool questions gold recall@4 went 0.660 → 0.665 and @10 0.788 → 0.795 (bench/tools.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

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


# A run of capitalised words, with lower-case connectors inside ("Pride and Prejudice", "Duke of York").
_NAME = re.compile(
    r"\b[A-Z][\w'.-]*(?:\s+(?:(?:of|the|and|de|la|le|von|van|der|in|for|a)\s+)*[A-Z][\w'.-]*)+"
)


def name_phrases(text: str) -> list[str]:
    """Distinct lower-cased phrases of the names in `text` that still hold two or more words once a
    leading stop word ("The", a sentence's first "In") is dropped."""
    phrases: dict[str, None] = {}
    for match in _NAME.finditer(text):
        words = [w.lower() for w in _WORD.findall(match.group())]
        while words and words[0] in STOP_WORDS:
            words = words[1:]
        if len(words) >= 2:
            phrases.setdefault(" ".join(words), None)
    return list(phrases)[:MAX_TERMS]


def fts_or_expression(terms: Sequence[str], phrases: Sequence[str] = ()) -> str:
    """An FTS5 MATCH expression that matches any of the (already tokenised) terms or phrases."""
    return " OR ".join(f'"{term}"' for term in [*terms, *phrases])
