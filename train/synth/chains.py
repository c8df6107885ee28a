"""Questions over two documents: a two-hop chain through an entity both name, and a comparison of two entities on
the same attribute.

Two-hop: document B has a fact about E ("When was {s} formed?" with E for {s}); document A names E in a unit
that describes it ("… directed by E", "Weekend workshop lead: E", a table row with E in a column). The question
asks B's fact of A's description of E, never naming E: "When was the director of Jaws born?". The agent must read
A to learn E, then find B.

Comparison: two facts with the same attribute ("was founded", a table column) and comparable answers (years, or
numbers with the same unit), about different subjects: "Which was founded first, X or Y?"; the answer is a name
of the question by construction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deepresearch.agent.reader import Unit, normalise

from .corpus import SynthDoc
from .descriptions import prose_description
from .facts import Fact, context_of, label_words, unit_spans
from .prose import person_page, plain_title

_COLUMN_STOP = frozenset({"with", "by", "for", "to", "from", "at", "in", "of", "and", "or", "notes", "note", "remarks"})


@dataclass(frozen=True)
class Description:
    text: str  # "the director of Jaws"
    doc_id: str
    unit: str
    names: str  # what in the unit singles the entity out ("Jaws", "T03"): the other document must not give it


@dataclass(frozen=True)
class EntityPage:
    """The bridge entity's own page, as far as a description needs it (descriptions.py): what it says the entity is,
    and whether it speaks of it as "he" or "she"."""

    doc: SynthDoc

    @property
    def main_sense(self) -> bool:
        """Its title has no disambiguation: "Nevada", not "Nevada (1944 film)"."""
        return "(" not in self.doc.title

    @property
    def person(self) -> bool:
        return person_page(self.doc)

    def says(self, text: str) -> bool:
        """Its lead names `text` ("Paris, France": the page on Paris says France)."""
        return text in self.doc.text[:400]

    def kind(self, kinds: tuple[str, ...]) -> str | None:
        """Which of `kinds` it says the entity is: its title's disambiguation ("Twins (band)"), its first sentence
        ("Nevada is a state …"), else the kind its text calls it most ("the state" twice at least, more than any
        other); None for another kind of page ("Nevada (1944 film)")."""
        m = re.search(r"\(([^()]*)\)\s*$", self.doc.title)
        if m:
            return next((w for w in re.findall(r"[a-z]+", m.group(1).lower()) if w in kinds), None)
        first = re.split(r"(?<=[a-z)])\.\s", self.doc.text[:500], maxsplit=1)[0]
        m = re.search(r"\b(?:is|was|are|were)\s+(?:a|an|the|one of the)\s+(.{0,80})", first)
        for word in re.findall(r"[a-z]+", m.group(1)) if m else []:
            if word in kinds:
                return word
            if word in ("of", "in", "that", "which", "who", "and"):
                break
        text = self.doc.text.lower()
        counts = sorted(((len(re.findall(rf"\b(?:the|this|a|an) {k}\b", text)), k) for k in kinds), reverse=True)
        return counts[0][1] if counts[0][0] >= 2 and counts[0][0] > counts[1][0] else None

    def gender(self) -> str:
        """"m" or "f" when a person's page clearly speaks of them as "he" or "she", else ""."""
        if not self.person:
            return ""
        text = self.doc.text[:1500]
        male = len(re.findall(r"\b(?:he|his|him)\b", text, re.IGNORECASE))
        female = len(re.findall(r"\b(?:she|her|hers)\b", text, re.IGNORECASE))
        return "m" if male >= 2 and male >= 3 * female else "f" if female >= 2 and female >= 3 * male else ""


def describe(entity: str, start: int, unit: Unit, doc: SynthDoc, avoid: str = "",
             table: list[Unit] | None = None, page: SynthDoc | None = None) -> Description | None:
    """How document `doc`'s unit describes the entity that stands at `start` in it, without naming it and without
    what `avoid` (the other document's unit) gives; `table`: the rows of the unit's table, to tell rows apart;
    `page`: the entity's own page, if any (what it says the entity is: descriptions.py)."""
    if unit.kind == "row" and unit.header:
        return _row_description(entity, unit, doc, avoid, table or [unit])
    if unit.kind == "field" and unit.key:
        value = unit.text.replace("**", "").split(":", 1)[-1].strip().rstrip(".")
        where = context_of(unit, doc)
        if value.split(" (")[0].strip() == entity and where and label_words(unit.key) not in _COLUMN_STOP:
            return Description(f"the {label_words(unit.key)} in {where}", doc.id, unit.text, where)
        return None
    if unit.kind in ("sentence", "item"):
        return _prose_description(entity, start, unit, doc, page)
    return None


def _cell(text: str) -> str:
    return text.split(" (")[0].strip()


def _row_description(entity: str, unit: Unit, doc: SynthDoc, avoid: str, table: list[Unit]) -> Description | None:
    """"the telescope whose status is repair": the entity's column, and another cell of its row that no other row of
    the table has in that column (and the other document does not give)."""
    cells = [_cell(c) for c in unit.cells]
    if entity not in cells or cells.index(entity) >= len(unit.header):
        return None
    col = cells.index(entity)
    label = label_words(unit.header[col])
    if not label or label in _COLUMN_STOP:
        return None
    rows = [u for u in table if u.header == unit.header]
    where = context_of(unit, doc)
    place = f" in {where}" if where else ""
    for other, value in enumerate(cells[: len(unit.header)]):
        other_label = label_words(unit.header[other])
        if other == col or not value or value in ("-", "–", "—") or sum(ch.isalnum() for ch in value) < 2 \
                or not other_label or other_label in _COLUMN_STOP or normalise(value) in normalise(avoid):
            continue
        if sum(len(u.cells) > other and _cell(u.cells[other]) == value for u in rows) != 1:
            continue  # another row has it too: it would not single the row out
        return Description(f"the {label} whose {other_label} is {value}{place}", doc.id, unit.text, value)
    return None


def _prose_description(entity: str, start: int, unit: Unit, doc: SynthDoc,
                       page: SynthDoc | None) -> Description | None:
    text = prose_description(entity, start, unit, doc, EntityPage(page) if page is not None else None)
    return Description(text, doc.id, unit.text, plain_title(doc.title)) if text else None


def mentions(unit: Unit, doc: SynthDoc) -> list[tuple[str, int]]:
    """The names and codes a unit gives (each span once), with where they stand: candidate bridge entities."""
    out: dict[str, int] = {}
    for text, kind, start, _label in unit_spans(unit, doc):
        if kind in ("name", "code") and len(text) >= 3 and text not in out:
            out[text] = start
    if unit.kind == "row":
        for cell in unit.cells:
            cell = cell.split(" (")[0].strip()
            if len(cell) >= 3 and cell not in out and any(ch.isalpha() for ch in cell):
                out[cell] = unit.text.find(cell)
    return list(out.items())


# --- comparisons -------------------------------------------------------------------------------

_YEAR = re.compile(r"\b(1[0-9]\d{2}|20\d{2})\b")
_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)*")


def comparable_value(fact: Fact) -> tuple[str, float] | None:
    """The fact's answer as a value to compare, with its unit: a year, or a number with what follows it."""
    if fact.kind == "date":
        years = _YEAR.findall(fact.answer)
        return ("year", float(years[-1])) if len(years) == 1 else None
    if fact.kind == "number":
        m = _NUMBER.search(fact.answer)
        if m is None:
            return None
        raw = m.group()
        value = raw.replace(",", "") if raw.count(",") and not re.search(r",\d{1,2}$", raw) else raw.replace(",", ".")
        try:
            number = float(value)
        except ValueError:
            return None
        unit = (fact.answer[: m.start()] + "#" + fact.answer[m.end():]).strip()
        return unit, number
    return None


def comparison_frame(a: Fact, b: Fact) -> tuple[str, bool] | None:
    """"Which was founded first, {a} or {b}?" and whether the smaller value wins; None when the attribute has no
    comparison the reader's rules read (agent/reader/comparison.py: first/earlier/later, more/higher/larger)."""
    options = "{a} or {b}"
    attr = a.attribute
    if a.kind == "date":
        if attr == "was born":
            return f"Who was born first, {options}?", True
        if attr == "did die":
            return f"Who died first, {options}?", True
        if a.template == "row":
            where = f" in {a.where}" if a.where else ""
            return f"Which has the earlier {attr}{where}, {options}?", True
        m = re.fullmatch(r"(was|were|is|are) (\w+)", attr)
        if m and a.template == "passive":
            return f"Which was {m.group(2)} first, {options}?", True
        return None
    if a.template == "row":
        noun = attr if len(attr.split()) == 1 and attr.endswith("s") else ""
        where = f" in {a.where}" if a.where else ""
        return (f"Which has more {noun}{where}, {options}?" if noun
                else f"Which has the higher {attr}{where}, {options}?"), False
    return None
