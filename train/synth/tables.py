"""Facts of structured units: a table row's cells (asked by their column, of the row's key cell) and a "Key:
value" line's value (asked by its key). The question names the row and the column, never the cell's neighbours,
so it does not copy its row.

    | SS-0002 | Chain 11-speed e-bike | KMC | X11-EL | 2 | …   →  What is the part no of Chain 11-speed e-bike in
                                                                  inventory?  (X11-EL)
    Weekend workshop lead: Tomasz Wierzbicki                   →  What is the weekend workshop lead in Volunteer
                                                                  Handbook?  (Tomasz Wierzbicki)
"""

from __future__ import annotations

from collections import Counter, defaultdict

from deepresearch.agent.reader import Unit

from .corpus import SynthDoc
from .facts import SUBJECT, Fact, context_of, first_fitting, label_words, unit_spans

# Columns whose cells name the row: preferred as its key over an id column.
_KEY_COLUMNS = ("name", "description", "item", "title", "product", "part", "member", "person", "telescope", "event",
                "what", "task", "role")
_EMPTY = frozenset({"", "-", "–", "—", "n/a", "none", "tbd", "?"})
MAX_VALUE_WORDS = 6


def _frames(label: str, kind: str, where: str) -> list[str]:
    """Question frames for a value under `label` (a column or a key) of SUBJECT, by the value's kind."""
    tail = f" in {where}?" if where else "?"
    if kind == "date":
        return [f"What date is given as the {label} of {SUBJECT}{tail}", f"When is the {label} of {SUBJECT}{tail}"]
    if kind == "number":
        frames = [f"How much is the {label} of {SUBJECT}{tail}", f"What is the {label} of {SUBJECT}{tail}"]
        if len(label.split()) == 1 and label.endswith("s"):
            frames.insert(0, f"How many {label} does {SUBJECT} have{tail}")
        return frames
    if kind == "code":
        return [f"What is the {label} of {SUBJECT}{tail}", f"What is the {label} identifier of {SUBJECT}{tail}"]
    return [f"What is the {label} of {SUBJECT}{tail}", f"Who is the {label} of {SUBJECT}{tail}"]


def _key_column(header: tuple[str, ...], cells: tuple[str, ...]) -> int:
    """The column that names a row: a naming column's, else the first cell of words (not an id or a number)."""
    for col, name in enumerate(header[: len(cells)]):
        if any(word in label_words(name).split() for word in _KEY_COLUMNS) and cells[col].strip().lower() not in _EMPTY:
            return col
    for col, cell in enumerate(cells[:3]):
        if " " in cell.strip() and sum(ch.isalpha() for ch in cell) >= 4:
            return col
    return 0


# A value read as several kinds is asked for as the most specific: "GB-RSS04395B616" is a code before a name, so
# its question is "What is the hull id of …", not "Who is the hull id of …".
_SPECIFIC = {"code": 0, "number": 1, "date": 2, "time": 3, "name": 4}


def _whole(spans: list[tuple[str, str, int, str]], value: str, label: str) -> tuple[str, str] | None:
    """The span that is the whole value (its parenthetical remark aside), with its most specific kind."""
    value = value.split(" (")[0].strip()
    kinds = [kind for text, kind, _start, span_label in spans if span_label == label and text == value
             and kind != "place"]
    return (value, min(kinds, key=lambda k: _SPECIFIC.get(k, len(_SPECIFIC)))) if kinds else None


def row_facts(doc: SynthDoc, units: list[Unit]) -> list[Fact]:
    """Every cell of every table row whose row key is unique in its table, asked of that key."""
    rows = [u for u in units if u.kind == "row" and u.header]
    # One key column a table: the one most of its rows name themselves by ("Razorbill", not its class "ILCA 7"),
    # the earlier of two as many.
    votes: dict[tuple[str, ...], Counter[int]] = defaultdict(Counter)
    for u in rows:
        votes[u.header][_key_column(u.header, u.cells)] += 1
    key_of = {header: max(cols, key=lambda col: (cols[col], -col)) for header, cols in votes.items()}
    keys = Counter((u.header, u.cells[key_of[u.header]].strip().lower()) for u in rows
                   if key_of[u.header] < len(u.cells))
    facts: list[Fact] = []
    for unit in rows:
        cells = unit.cells
        key_col = key_of[unit.header]
        if key_col >= len(cells):
            continue
        subject = cells[key_col].split(" (")[0].strip()
        if subject.lower() in _EMPTY or keys[(unit.header, cells[key_col].strip().lower())] > 1:
            continue
        spans = unit_spans(unit, doc)
        where = context_of(unit, doc)
        for col, cell in enumerate(cells[: len(unit.header)]):
            label = label_words(unit.header[col])
            if col == key_col or cell.strip().lower() in _EMPTY or not label or label.isdigit():
                continue
            found = _whole(spans, cell, unit.header[col])
            if found is None or found[0].lower() in subject.lower():
                continue
            frame = first_fitting(_frames(label, found[1], where), subject, found[1])
            if frame is not None:
                facts.append(Fact(doc.id, doc.title, unit.text, found[0], found[1], subject, label, frame, "row",
                                  where))
    return facts


def field_facts(doc: SynthDoc, units: list[Unit]) -> list[Fact]:
    """The value of each "Key: value" line that is one short span, asked by its key where it stands."""
    facts: list[Fact] = []
    for unit in units:
        if unit.kind != "field" or not unit.key:
            continue
        value = unit.text.replace("**", "").replace("__", "").split(":", 1)[-1].strip().rstrip(".")
        label = label_words(unit.key)
        if not value or len(value.split()) > MAX_VALUE_WORDS or len(label.split()) < 1:
            continue
        found = _whole(unit_spans(unit, doc), value, unit.key)
        where = context_of(unit, doc)
        if found is None or not where:
            continue
        tail = f" in {SUBJECT}?"
        kind = found[1]
        frames = {"date": [f"What date is the {label}{tail}", f"When is the {label}{tail}"],
                  "number": [f"How much is the {label}{tail}", f"What is the {label}{tail}"],
                  "code": [f"What is the {label}{tail}", f"What is the {label} identifier{tail}"]}.get(
            kind, [f"Who is the {label}{tail}", f"What is the {label}{tail}"])
        frame = first_fitting(frames, where, kind)
        if frame is not None:
            facts.append(Fact(doc.id, doc.title, unit.text, found[0], kind, where, label, frame, "field"))
    return facts
