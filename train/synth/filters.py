"""What keeps a synthesized question: each check drops what it must and counts what it dropped, per kind.

    answer_in_question  the answer's words are in the question (not for comparisons: there the answer is one of
                        the two names asked about, by construction)
    copies_source       more than `max_overlap` of the question's word 4-grams stand in its source unit
    wrong_kind          the reader does not take the question to ask for the answer's kind (a date, a number, a
                        code, a name; agent/reader/kinds.py), or a comparison's two options are not read as such
    duplicate           the same question (normalised) was kept already
    common_opening      its kind already has `max_per_opening` questions of its opening (the frame's words before
                        the subject: "When was" for "When was {s} born?" and "When was {s} released?"): a corpus of
                        biographies and films would otherwise make most questions dates, and what is trained on
                        them is a date reader (a cap per whole frame left them half dates: session 72)
    not_retrievable     the local search does not find the source in its top k: for a one-hop question, the source
                        for the question; for a two-hop one, the first document for the question and the second
                        for the bridge entity (what the agent's follow-up hop searches); for a comparison, each
                        option's document for the question or the option's name
    still_answerable    (unanswerable) the served corpus's top k for the question hold the answer anyway
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence

from deepresearch.agent.reader import answer_choices, normalise
from deepresearch.evals.scoring.metrics import answer_in_text, normalize_answer
from pydantic import BaseModel, Field

from .facts import kind_fits

CHECKS = ("answer_in_question", "copies_source", "wrong_kind", "duplicate", "common_opening", "not_retrievable",
          "still_answerable")
KINDS = ("one_hop", "two_hop", "comparison", "unanswerable")


class Candidate(BaseModel):
    """A question before the filters: what it asks, its known answer, and what it was made from."""

    kind: str  # one of KINDS
    question: str
    answer: str  # "not found" for an unanswerable one
    answer_kind: str  # date, number, code, name (the span's); "choice" for a comparison
    gold_doc_ids: list[str] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)  # the units it was made from, verbatim
    template: str = ""
    frame: str = ""  # the question with its subject(s) left open ("When was {s} born?")
    # What the search must find: (query, doc id) pairs, each doc in the query's top k.
    must_find: list[tuple[str, str]] = Field(default_factory=list)
    held_out_answer: str = ""  # unanswerable: the answer the held-out source gives
    options: list[str] = Field(default_factory=list)  # comparison: the two names


class FilterStats(BaseModel):
    """Per kind: how many were made, dropped by each check, kept after all, and used (train + dev)."""

    made: dict[str, int] = Field(default_factory=dict)
    dropped: dict[str, dict[str, int]] = Field(default_factory=dict)
    kept: dict[str, int] = Field(default_factory=dict)
    used: dict[str, int] = Field(default_factory=dict)

    def drop(self, kind: str, check: str) -> None:
        self.dropped.setdefault(kind, {c: 0 for c in CHECKS})[check] += 1

    def table(self) -> str:
        """The statistics as a markdown table (kinds as rows)."""
        head = ["kind", "made", *CHECKS, "kept", "used"]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for kind in KINDS:
            if not self.made.get(kind):
                continue
            dropped = self.dropped.get(kind, {})
            row = [kind, self.made[kind], *(dropped.get(c, 0) for c in CHECKS), self.kept.get(kind, 0),
                   self.used.get(kind, 0)]
            lines.append("| " + " | ".join(str(x) for x in row) + " |")
        return "\n".join(lines)


def ngrams(text: str, n: int = 4) -> list[tuple[str, ...]]:
    words = normalise(text).split()
    return [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]


def overlap(question: str, source: str, n: int = 4) -> float:
    """The share of the question's word n-grams that stand in the source (0 for a question shorter than n)."""
    grams = ngrams(question, n)
    if not grams:
        return 0.0
    have = set(ngrams(source, n))
    return sum(g in have for g in grams) / len(grams)


def answer_in_question(question: str, answer: str) -> bool:
    """The answer's words (as EM normalises them) stand in the question, as whole tokens."""
    return answer_in_text([question], [answer])


def well_formed(c: Candidate) -> bool:
    if c.kind == "comparison":
        options = answer_choices(c.question) or []  # the reader drops a leading article, as EM does
        return [normalize_answer(o) for o in options] == [normalize_answer(o) for o in c.options]
    return kind_fits(c.question, c.answer_kind)


class QuestionFilter:
    """Applies the checks in CHECKS order; `search(query, k)` is the corpus's search (ids), `served_search` the
    served corpus's (held-out documents left out) with `text_of(doc_id)`."""

    def __init__(self, search: Callable[[str, int], list[str]], k: int, max_overlap: float,
                 served_search: Callable[[str, int], list[str]] | None = None,
                 text_of: Callable[[str], str] | None = None, max_per_opening: int | None = None):
        self.search, self.k, self.max_overlap = search, k, max_overlap
        self.max_per_opening = max_per_opening
        self.served_search, self.text_of = served_search or search, text_of or (lambda _id: "")
        self.stats = FilterStats()
        self._seen: set[str] = set()
        self._cache: dict[str, list[str]] = {}
        self._openings: dict[tuple[str, str], int] = {}

    def _top(self, query: str) -> list[str]:
        if query not in self._cache:
            self._cache[query] = self.search(query, self.k)
        return self._cache[query]

    def check(self, c: Candidate) -> str | None:
        """The first check `c` fails, or None when it is kept."""
        answer = c.held_out_answer or c.answer
        if c.kind != "comparison" and answer_in_question(c.question, answer):
            return "answer_in_question"
        if any(overlap(c.question, source) > self.max_overlap for source in c.sources):
            return "copies_source"
        if not well_formed(c):
            return "wrong_kind"
        key = normalise(c.question)
        if key in self._seen:
            return "duplicate"
        if self.max_per_opening is not None and c.frame and \
                self._openings.get((c.kind, opening(c.frame)), 0) >= self.max_per_opening:
            return "common_opening"
        if not self._retrievable(c):
            return "not_retrievable"
        if c.kind == "unanswerable" and any(answer_in_text([self.text_of(d)], [answer])
                                            for d in self.served_search(c.question, self.k)):
            return "still_answerable"
        return None

    def _retrievable(self, c: Candidate) -> bool:
        if c.kind == "comparison":
            return all(doc in self._top(c.question) or doc in self._top(query) for query, doc in c.must_find)
        return all(doc in self._top(query) for query, doc in c.must_find)

    def keep(self, candidates: Sequence[Candidate]) -> list[Candidate]:
        kept: list[Candidate] = []
        for c in candidates:
            self.stats.made[c.kind] = self.stats.made.get(c.kind, 0) + 1
            failed = self.check(c)
            if failed is not None:
                self.stats.drop(c.kind, failed)
                continue
            self._seen.add(normalise(c.question))
            if c.frame:
                key = (c.kind, opening(c.frame))
                self._openings[key] = self._openings.get(key, 0) + 1
            self.stats.kept[c.kind] = self.stats.kept.get(c.kind, 0) + 1
            kept.append(c)
        return kept


def opening(frame: str) -> str:
    """A frame's words before its first open subject ("When was" of "When was {s} born?"); the whole frame when it
    starts with one."""
    head = frame.split("{", 1)[0].strip()
    return head or frame


def question_id(c: Candidate) -> str:
    return f"synth-{c.kind.replace('_', '')}-{hashlib.sha1(normalise(c.question).encode()).hexdigest()[:12]}"


_SPACES = re.compile(r"\s+")


def tidy(question: str) -> str:
    return _SPACES.sub(" ", question).replace(" ?", "?").strip()
