"""Citation check: a cited quote must occur in the fetched text of its source, and support its point.

"Verified" means all three:
  1. the quote is in the source (case-, accent-, punctuation- and whitespace-insensitive),
  2. the quote is about the question: it (with its title and heading) covers enough of the question's words, one
     of the names the question gives among them, on its own or through a linking quote of a multi-hop chain
     (agent/reader/trust/relevance.py; the writer decides it and passes `about`), and
  3. the point that cites it says something (not a bare "yes"), and nothing specific the quote does not:
     every name (capitalised word), number and date of the point occurs in the quote or its source's title.
Check 3 is cheap and literal on purpose: it cannot prove that a quote entails its point, but it
catches the failure a small model makes most, a point naming someone or something its quote never
mentions ("… a comedy play by John Burgoyne [2]" citing a quote that names Aphra Behn).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from deepresearch.agent.reader import normalise, quote_supported

from .state import Citation, Finding

_TERM = re.compile(r"\w[\w'’\-]*", re.UNICODE)
# Capitalised words that are not names (sentence openers, pronouns, answer words).
_PLAIN = frozenset([
    "a", "an", "the", "in", "on", "at", "of", "to", "for", "from", "by", "with", "and", "or", "but", "he", "she",
    "it", "they", "this", "that", "these", "those", "his", "her", "its", "their", "there", "after", "before",
    "during", "when", "while", "although", "however", "as", "also", "both", "some", "many", "most", "one", "two",
    "three", "i", "we", "you", "our", "if", "yes", "no", "not", "answer", "according", "because", "since", "until",
    "which", "who", "whom", "whose", "what", "where", "why", "how", "is", "was", "were", "are", "be", "been"
])


def unsupported_terms(claim: str, quote: str, title: str = "") -> list[str]:
    """The names, numbers and dates of `claim` that neither the quote nor the source's title contains."""
    support = f" {normalise(quote)} {normalise(title)} "
    missing: list[str] = []
    for m in _TERM.finditer(claim):
        word = m.group()
        specific = any(c.isdigit() for c in word) or (word[:1].isupper() and word.lower() not in _PLAIN)
        if not specific:
            continue
        key = normalise(re.sub(r"['’]s$", "", word))
        if key and f" {key} " not in support and word not in missing:
            missing.append(word)
    return missing


def says_something(claim: str) -> bool:
    """Whether a point has any word beyond answer and function words: a bare "yes" or "no" cites nothing
    (seen: both "yes" and "no" verified as points of one report, each citing an unrelated sentence)."""
    return any(m.group().lower() not in _PLAIN for m in _TERM.finditer(claim))


NOT_ABOUT = "the quote is not about the question"


def check_citation(n: int, finding: Finding, claim: str, source_text: Callable[[str], str | None],
                   about: bool = True) -> Citation:
    """`about`: whether the quote is about the question (agent/reader/trust/relevance.py), decided by the caller."""
    text = source_text(finding["source"])
    if text is None:
        ok, reason = False, "source text not available"
    elif not quote_supported(finding["quote"], text):
        ok, reason = False, "quote not found in the source"
    elif not about:
        ok, reason = False, NOT_ABOUT
    elif not says_something(claim):
        ok, reason = False, "the point says nothing a quote could support"
    elif missing := unsupported_terms(claim, finding["quote"], finding["title"]):
        ok, reason = False, "the quote does not support the point (" + ", ".join(missing[:4]) + " not in it)"
    else:
        ok, reason = True, ""
    return Citation(n=n, source=finding["source"], title=finding["title"], doc_id=finding["doc_id"],
                    quote=finding["quote"], claim=claim, verified=ok, reason=reason)
