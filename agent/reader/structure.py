"""Answer spans of a structured unit, each with the label that says what it is.

A table row's cells are answers to questions about their column ("How many links …?" → the cell under "Links");
a "Key: value" line's value answers a question about its key ("Who is the weekend workshop lead?" → the value of
"Weekend workshop lead"). So a span keeps its cell's column name or its line's key as its label, and the ranker
weighs how much of the label the question asks about. A whole short cell is a span too: a cell is an answer's
natural edge ("Rui Castro (cover)" holds "Rui Castro", "€38.00" is the price).
"""

from __future__ import annotations

from .evidence import EvidenceSentence
from .spans import Span, spans_of
from .words import content_words, stem

_CELL_WORDS = 6


def _whole_cell(cell: str, start: int) -> list[Span]:
    """The cell itself as a span of the kind its shape says (a date, a number, a code or a name), if short."""
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
            out += [(Span(s.text, s.kind, start + s.start), label) for s in spans_of(cell, lists)]
            out += [(s, label) for s in _whole_cell(cell, start)]
        return list(dict.fromkeys(out))  # a cell's own span and its whole-cell span are often the same
    spans = spans_of(sent.text, lists)
    if sent.kind == "field" and sent.key:
        colon = sent.text.find(":")
        return [(s, sent.key if s.start > colon else "") for s in spans]
    return [(s, "") for s in spans]


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


def label_match(label: str, relation: set[str]) -> float:
    """How much of a span's label the question asks about: the share of the label's words among the question's
    relation words ("Links" for "how many links", "Focal length" for "what is the focal length")."""
    words = {stem(w) for w in content_words(label.replace("_", " "))}
    return len(words & relation) / len(words) if words else 0.0


def context_stems(sent: EvidenceSentence) -> set[str]:
    """The words a unit stands under: its heading, and a row's column names."""
    return {stem(w) for w in content_words(" ".join([sent.heading, *sent.header]).replace("_", " "))}
