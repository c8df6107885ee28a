"""Offices and who holds them: "the rotavator is booked through the Deputy Site Warden" answers "who would I ask to
book the rotavator?" only with the person the evidence names as Deputy Site Warden elsewhere ("| Deputy Site Warden |
Priya Nair |", "Noor Haddad (Deputy Equipment Officer)", "Aileen Mbeki, Treasurer", "Treasurer: Aileen Mbeki").

A person's own documents (minutes, club pages, rotas) name people by their office as often as by their name, so a
"who" question whose best span is an office is a two-hop question: office → holder. The holder takes the office's
place among the candidates, cited by the unit that pairs the two; relevance.py then checks the chain through the
office's name (the unit that asked about the question names the office, the holder's unit names it too).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..document.evidence import EvidenceSentence
from ..document.units import row_cells
from ..language.spans import name_spans
from .name_edges import common_words, inner_capitals, without_opening_word

# Nouns that head an office or a job's title.
OFFICE_NOUNS = frozenset([
    "officer", "warden", "secretary", "treasurer", "chair", "chairman", "chairwoman", "chairperson", "coordinator",
    "president", "director", "manager", "minister", "governor", "mayor", "lead", "leader", "editor", "captain",
    "coach", "steward", "clerk", "administrator", "organiser", "organizer", "representative", "commissioner",
    "superintendent", "supervisor", "inspector", "ambassador", "chancellor", "trustee", "caretaker", "bursar",
    "registrar", "convenor", "convener", "keeper", "marshal", "commodore", "instructor",
])
# Words that make a capitalised run an organisation, place or work rather than a person.
NOT_A_PERSON = frozenset([
    "university", "college", "school", "company", "records", "party", "church", "county", "city", "river", "street",
    "club", "team", "award", "society", "museum", "band", "festival", "association", "stadium", "park", "hall",
    "house", "games", "championship", "league", "council", "corporation", "inc", "ltd", "group", "army", "navy",
    "force", "department", "station", "airport", "kingdom", "republic", "empire", "state", "states", "island",
    "mountain", "lake", "bay", "film", "series", "show", "album", "studio", "studios", "theatre", "theater",
    "hospital", "institute", "academy", "center", "centre", "bank", "act", "war", "battle", "day", "cup", "prize",
    "hotel", "road", "bridge", "district", "province", "region", "court", "castle", "palace", "tower", "magazine",
    "newspaper", "network", "channel", "radio", "television", "tv", "farm", "fund", "stables", "co-op", "committee",
    "trust", "foundation", "lane",
])
_WORD = re.compile(r"[\w'’\-]+")


def _key(text: str) -> str:
    return " ".join(w.lower() for w in _WORD.findall(text) if w.lower() not in ("the", "a", "an", "our", "your"))


def is_office(text: str) -> bool:
    """A span that names an office: its last word heads one ("Deputy Site Warden", "competition coordinator")."""
    words = _WORD.findall(text)
    return bool(words) and words[-1].lower() in OFFICE_NOUNS and not any(c.isdigit() for c in text)


def is_person(text: str) -> bool:
    """A span shaped like a person's name: one to four capitalised words, no digits, no office, no organisation."""
    words = text.split()
    return 1 <= len(words) <= 4 and all(w[:1].isupper() for w in words) and not any(c.isdigit() for c in text) \
        and not is_office(text) and not any(w.lower().strip(".,") in NOT_A_PERSON for w in words)


# "Noor Haddad (Deputy Equipment Officer)", "Priya Nair, Deputy Site Warden", "Priya Nair - warden"
_AFTER_NAME = re.compile(r"^\s*(?:\(|,\s*|\s[-–—]\s)(?:the\s+|our\s+)?([\w'’\- ]{3,60}?)\s*(?:\)|[,;.]|$)")
# "Treasurer: Aileen Mbeki", "Lettings Secretary – Malcolm Reid"
_BEFORE_NAME = re.compile(r"([\w'’\- ]{3,60}?)\s*(?::|\s[-–—])\s*$")


def holders(sentences: Sequence[EvidenceSentence]) -> dict[str, list[tuple[str, int]]]:
    """Each office the evidence pairs with a person (by its key: "deputy site warden"), with the person's name and
    the index of the unit that pairs them, in evidence order."""
    out: dict[str, list[tuple[str, int]]] = {}
    # "- Email Noor Haddad (Deputy …)": the ordinary word opening a unit is no part of the holder's name, which the
    # fullest-name rule below would otherwise prefer
    common, capitals = common_words(sentences), inner_capitals(sentences)

    def add(office: str, person: str, index: int) -> None:
        office = office.strip()
        if is_office(office) and is_person(person) and len(office.split()) <= 4:
            pairs = out.setdefault(_key(office), [])
            if (person, index) not in pairs:
                pairs.append((person, index))

    for i, sent in enumerate(sentences):
        if sent.kind == "row":
            cells = row_cells(sent.text)
            offices = [c for c in cells if is_office(c)]
            people = [c for c in cells if is_person(c)]
            if len(offices) == 1 and len(people) == 1:
                add(offices[0], people[0], i)
            continue
        text = sent.text
        for span in name_spans(text):
            span = without_opening_word(text, span, common, capitals)
            if not is_person(span.text):
                continue
            end = span.start + len(span.text)
            if (m := _AFTER_NAME.match(text[end:])) is not None:
                add(m.group(1), span.text, i)
            if (m := _BEFORE_NAME.search(text[:span.start])) is not None:
                add(m.group(1).split(",")[-1].split("(")[-1], span.text, i)
    return out


def holder_of(office: str, offices: dict[str, list[tuple[str, int]]]) -> tuple[str, int] | None:
    """The person the evidence names as holding `office` (the fullest name of the first pairing), if any."""
    pairs = offices.get(_key(office))
    if not pairs:
        return None
    return max(pairs, key=lambda p: len(p[0].split()))
