"""A question set asked the way people ask: how much an answer depends on the phrasing, not on what is asked.

Each phrasing keeps what a question asks and changes only how it is put:

    request     "What is the fax number?"  → "Do you know what the fax number is?" (or "Can you tell me …",
                "I'd like to know …", "Any idea …", in turn)
    imperative  "What is the fax number?"  → "Tell me the fax number." (only questions of that shape)
    thanks      "What is the fax number?"  → "What is the fax number? Thanks!"
    reason      "What is the fax number?"  → "What is the fax number? I need it for a form I'm filling in."
    lowercase   "What is the fax number?"  → "what is the fax number"
    keywords    "What is the practice's fax number?"  → "practice's fax number" (as typed into a search box)

A rephrased set keeps each question's id, gold answer and documents, so `eval compare` of a run on it against a run
on the set as written pairs the same questions. Only wh-questions are wrapped as requests, and a question that
names its alternatives ("A or B") is never rephrased as a request: the rewrite must not change what it asks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from deepresearch.evals.data.dataset import DatasetError, load_questions
from pydantic import BaseModel

_WH = re.compile(r"^(what|which|who|whom|whose|where|when|why|how)\b", re.IGNORECASE)
# "What is the fax number?": a bare wh-word, its copula and a phrase, which a request puts in statement order.
_WH_COPULA = re.compile(r"^(what|who|where|when)(?:'s|’s|\s+(is|are|was|were))\s+((?:the|our|my|your|their|his|her|"
                        r"its|this|that|these|those)\b[^?]*?)\s*\??$", re.IGNORECASE)
_WHAT_IS_THE = re.compile(r"^what(?:'s|’s|\s+is)\s+((?:the|our|my|your|their)\b[^?]*?)\s*\??$", re.IGNORECASE)
_REQUESTS = ("Do you know {}?", "Can you tell me {}?", "I'd like to know {}.", "Any idea {}?")
# The words a keyword query leaves out: the question's form (wh-words, auxiliaries, pronouns) and small words.
_FORM_WORDS = frozenset({
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "and", "or", "is", "are",
    "was", "were", "be", "been", "do", "does", "did", "can", "could", "should", "would", "will", "shall",
    "may", "might", "must", "has", "have", "had", "what", "which", "who", "whom", "whose", "where", "when",
    "why", "how", "we", "our", "us", "i", "my", "me", "you", "your", "it", "its", "this", "that", "these",
    "those", "there",
})
_REASONS = ("I need it for a form I'm filling in.", "My colleague asked me this morning.",
            "I couldn't find it myself.")


def _request(question: str, n: int) -> str | None:
    text = question.strip()
    if not _WH.match(text) or " or " in text.lower():
        return None
    if (m := _WH_COPULA.match(text)) is not None:
        clause = f"{m.group(1).lower()} {m.group(3)} {(m.group(2) or 'is').lower()}"
    else:
        clause = text.rstrip("?").rstrip()
        clause = clause[:1].lower() + clause[1:]
    return _REQUESTS[n % len(_REQUESTS)].format(clause)


def _imperative(question: str, n: int) -> str | None:
    m = _WHAT_IS_THE.match(question.strip())
    return f"Tell me {m.group(1)}." if m is not None else None


def _thanks(question: str, n: int) -> str | None:
    return f"{question.strip()} Thanks!"


def _reason(question: str, n: int) -> str | None:
    return f"{question.strip()} {_REASONS[n % len(_REASONS)]}"


def _lowercase(question: str, n: int) -> str | None:
    return question.strip().rstrip("?").rstrip().lower()


def _keywords(question: str, n: int) -> str | None:
    words = [w for w in question.strip().rstrip("?").split() if w.lower().strip(",.;:") not in _FORM_WORDS]
    return " ".join(words) or None


PHRASINGS: dict[str, Callable[[str, int], str | None]] = {
    "request": _request, "imperative": _imperative, "thanks": _thanks, "reason": _reason, "lowercase": _lowercase,
    "keywords": _keywords,
}


class RephrasedSet(BaseModel):
    questions: Path
    phrasing: str
    kept: int  # questions rephrased
    skipped: int  # left out: not of a shape the phrasing applies to


def rephrase(questions_path: Path, out_path: Path, phrasing: str, limit: int | None = None) -> RephrasedSet:
    """Write `questions_path`'s questions (the first `limit`) asked the `phrasing` way to `out_path` (ids, golds and
    documents kept)."""
    if phrasing not in PHRASINGS:
        raise DatasetError(f"unknown phrasing {phrasing!r}: choose one of {', '.join(PHRASINGS)}")
    rows, skipped = [], 0
    for n, q in enumerate(load_questions(questions_path)[:limit]):
        asked = PHRASINGS[phrasing](q.question, n)
        if asked is None:
            skipped += 1
            continue
        rows.append({**q.model_dump(mode="json"), "question": asked, "asked_as": q.question, "phrasing": phrasing})
    if not rows:
        raise DatasetError(f"{questions_path}: no question has a shape the {phrasing!r} phrasing applies to")
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return RephrasedSet(questions=out_path, phrasing=phrasing, kept=len(rows), skipped=skipped)
