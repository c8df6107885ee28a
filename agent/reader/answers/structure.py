"""Answer spans of a structured unit, each with the label that says what it is.

A table row's cells are answers to questions about their column ("How many links …?" → the cell under "Links");
a "Key: value" line's value answers a question about its key ("Who is the weekend workshop lead?" → the value of
"Weekend workshop lead"). So a span keeps its cell's column name or its line's key as its label, and the ranker
weighs how much of the label the question asks about. A whole short cell is a span too: a cell is an answer's
natural edge ("Rui Castro (cover)" holds "Rui Castro", "€38.00" is the price).
"""

from __future__ import annotations

import re

from ..document.evidence import EvidenceSentence
from ..language.spans import STOP_WORDS, Span, bound_numbers, spans_of
from ..language.words import content_words, stem

_CELL_WORDS = 6


def _whole_cell(cell: str, start: int) -> list[Span]:
    """The cell itself as a span of the kind its shape says (a date, a number, a code or a name), if short; a
    parenthetical remark is not part of it ("Rui Castro (cover)" → "Rui Castro")."""
    cell = cell.split(" (")[0].strip()
    if not cell or len(cell.split()) > _CELL_WORDS or cell in ("-", "–", "—"):
        return []
    inner = spans_of(cell)
    whole = [s for s in inner if s.start == 0 and s.text == cell]
    if whole:
        return [Span(s.text, s.kind, start) for s in whole]
    if any(ch.isalpha() for ch in cell) and cell[:1].isupper():
        return [Span(cell, "name", start)]
    return []


def labelled_spans(sent: EvidenceSentence, lists: bool = False) -> list[tuple[Span, str]]:
    """Every span of the unit with its label: the column of a row's cell, the key of a field's value, or ""."""
    if sent.kind == "row" and sent.header:
        out: list[tuple[Span, str]] = []
        for col, (cell, start) in enumerate(_cells_with_offsets(sent.text)):
            label = sent.header[col] if col < len(sent.header) else ""
            out += [(Span(s.text, s.kind, start + s.start), label) for s in _standalone(spans_of(cell, lists), cell)]
            out += [(s, label) for s in _whole_cell(cell, start)]
        return list(dict.fromkeys(out))  # a cell's own span and its whole-cell span often coincide
    spans = _standalone(spans_of(sent.text, lists), sent.text)
    if sent.kind == "field" and sent.key:
        colon = sent.text.find(":")
        return [(s, sent.key if s.start > colon else "") for s in spans]
    return [(s, "") for s in spans]


def _standalone(spans: list[Span], text: str) -> list[Span]:
    """Spans of other kinds that stand inside a date ("12" and "08" of "12/08/2024") are no answers of their own, nor
    are numbers inside a code ("3.0" of "v2.3.0", "5 capacitive" of "RS-5 capacitive"), a day and month ("30" of
    "30 Aug") or after a model's name ("10.5" of "Anvil Foundry 10.5")."""
    dates = [(s.start, s.start + len(s.text)) for s in spans if s.kind == "date"]
    codes = [(s.start, s.start + len(s.text)) for s in spans if s.kind == "code"] + bound_numbers(text, spans)
    return [s for s in spans if (s.kind == "date" or not any(a <= s.start and s.start + len(s.text) <= b
                                                             for a, b in dates))
            and (s.kind != "number" or not any(a <= s.start < b for a, b in codes))]


def _cells_with_offsets(row: str) -> list[tuple[str, int]]:
    """The cells of a row (`| a | b |` or `a | b | c`), each with the offset of its text in the row."""
    inner_start = row.index("|") + 1 if row.lstrip().startswith("|") else 0
    inner_end = row.rindex("|") if row.rstrip().endswith("|") and inner_start else len(row)
    out: list[tuple[str, int]] = []
    pos = inner_start
    for raw in row[inner_start:inner_end].split("|"):
        text = raw.strip()
        out.append((text, pos + (len(raw) - len(raw.lstrip())) if text else pos))
        pos += len(raw) + 1
    return out


_WH = re.compile(r"\b(what|which|whose|who|whom|how many|how much|how long|when|where)\b", re.IGNORECASE)
_SKIP = frozenset({"is", "was", "are", "were", "the", "a", "an", "do", "does", "did", "should", "can", "could", "will",
                   "would", "must", "has", "have", "had", "many", "much"})
# Words that say what kind of value is asked, not which one: a column named "Date" holds every row's date.
_KIND_WORDS = frozenset({"date", "dates", "day", "year", "years", "time", "number", "name", "place", "person", "one"})


def asked_words(question: str) -> set[str]:
    """The stems of what the question asks for: up to four words after its question word, past auxiliaries and
    articles, until a preposition or another function word ("how many links does …" → link; "what is the focal
    length of …" → focal, length; "who leads the …" → lead; "what I2C address does …" → i2c, addre)."""
    m = _WH.search(question)
    words: list[str] = []
    for raw in question[m.end():].split() if m else []:
        word = re.sub(r"[^\w\-]", "", raw.lower())
        if not word or (word in _SKIP and not words):
            continue
        if word in STOP_WORDS or word in _SKIP or len(words) == 4:
            break
        words.append(word)
    return {stem(w) for w in content_words(" ".join(words).replace("-", " ")) if w not in _KIND_WORDS}


def label_match(label: str, asked: set[str]) -> float:
    """How much of a span's label the question asks for: the share of the label's words among the asked words
    ("Links" for "how many links", "Focal length" for "what is the focal length", "Lead" for "who leads")."""
    words = {stem(w) for w in content_words(label.replace("_", " "))}
    return len(words & asked) / len(words) if words else 0.0


def context_stems(sent: EvidenceSentence) -> set[str]:
    """The words a unit stands under: its heading, and a row's column names."""
    return {stem(w) for w in content_words(" ".join([sent.heading, *sent.header]).replace("_", " "))}
