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
from .facts import Fact, context_of, label_words, unit_spans
from .prose import TOKEN, person_page, plain_title, verb_group

_AGENTS = {
    "directed": "director", "written": "writer", "produced": "producer", "composed": "composer",
    "founded": "founder", "co-founded": "co-founder", "established": "founder", "created": "creator",
    "designed": "designer", "developed": "developer", "published": "publisher", "owned": "owner",
    "built": "builder", "invented": "inventor", "performed": "performer", "sung": "singer", "painted": "painter",
    "illustrated": "illustrator", "edited": "editor", "discovered": "discoverer", "coached": "coach",
    "managed": "manager", "hosted": "host", "narrated": "narrator", "led": "leader", "operated": "operator",
    "manufactured": "manufacturer", "distributed": "distributor", "headed": "head", "chaired": "chair",
    "translated": "translator", "photographed": "photographer", "choreographed": "choreographer",
    "voiced": "voice actor", "recorded": "recording artist", "sculpted": "sculptor", "commissioned": "commissioner",
}
# What a noun before a name says it is: "rock band Linkin Park", "his wife Mary", "the capital Prague".
_ROLES = frozenset({
    "band", "singer", "actor", "actress", "director", "company", "city", "river", "team", "club", "wife", "husband",
    "son", "daughter", "father", "mother", "producer", "writer", "author", "album", "film", "novel", "label",
    "studio", "university", "school", "party", "president", "founder", "capital", "county", "town", "village",
    "brother", "sister", "coach", "manager", "captain", "frontman", "guitarist", "drummer", "vocalist", "composer",
    "character", "network", "station", "airline", "magazine", "newspaper", "publisher", "owner", "rapper", "group",
    "duo", "songwriter", "comedian", "poet", "novelist", "architect", "painter", "partner", "successor",
    "predecessor", "teammate", "cousin", "uncle", "nephew", "grandson", "granddaughter", "stadium", "venue",
    "subsidiary", "brand", "series", "show", "franchise", "sequel", "game", "song", "single", "musician",
})
_COLUMN_STOP = frozenset({"with", "by", "for", "to", "from", "at", "in", "of", "and", "or", "notes", "note", "remarks"})


@dataclass(frozen=True)
class Description:
    text: str  # "the director of Jaws"
    doc_id: str
    unit: str
    names: str  # what in the unit singles the entity out ("Jaws", "T03"): the other document must not give it


def describe(entity: str, start: int, unit: Unit, doc: SynthDoc, avoid: str = "",
             table: list[Unit] | None = None) -> Description | None:
    """How document `doc`'s unit describes the entity that stands at `start` in it, without naming it and without
    what `avoid` (the other document's unit) gives; `table`: the rows of the unit's table, to tell rows apart."""
    if unit.kind == "row" and unit.header:
        return _row_description(entity, unit, doc, avoid, table or [unit])
    if unit.kind == "field" and unit.key:
        value = unit.text.replace("**", "").split(":", 1)[-1].strip().rstrip(".")
        where = context_of(unit, doc)
        if value.split(" (")[0].strip() == entity and where and label_words(unit.key) not in _COLUMN_STOP:
            return Description(f"the {label_words(unit.key)} in {where}", doc.id, unit.text, where)
        return None
    if unit.kind in ("sentence", "item"):
        return _prose_description(entity, start, unit, doc)
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


def _prose_description(entity: str, start: int, unit: Unit, doc: SynthDoc) -> Description | None:
    title = plain_title(doc.title)
    if not title or normalise(title) == normalise(entity):
        return None
    words = TOKEN.findall(unit.text[:start])
    lower = [w.lower() for w in words]
    if not words or "," in unit.text[:start] or ";" in unit.text[:start]:
        return None  # E may stand in a clause about something else
    about_title = (lower[0] in ("it", "they") or (lower[0] in ("he", "she") and person_page(doc))
                   or normalise(unit.text).startswith(normalise(title))
                   or bool(re.match(r"^the [a-z]+$", " ".join(lower[:2]))))
    if len(words) >= 2 and lower[-1] == "by" and (agent := _AGENTS.get(lower[-2])) and about_title:
        # "Jaws is a 1975 film directed by E", "It was written by E": E made the page's subject
        return Description(f"the {agent} of {title}", doc.id, unit.text, title)
    if len(words) >= 2 and lower[-2:] == ["born", "in"]:
        group = verb_group(words)
        if group is not None and words[: group[0]] and about_title:
            return Description(f"the birthplace of {title}", doc.id, unit.text, title)
    roles = [w for w in lower[-2:] if w in _ROLES]
    if roles and lower[-1] in _ROLES and words[-1].islower():
        phrase = " ".join(lower[-2:]) if len(lower) >= 2 and words[-2].islower() and lower[-2] not in (
            "the", "a", "an", "his", "her", "its", "their", "by", "of", "and", "with", "to", "in") else lower[-1]
        if about_title:
            return Description(f"the {phrase} of {title}", doc.id, unit.text, title)
    return None


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
