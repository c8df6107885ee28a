"""How a sentence describes an entity E relative to its page's subject T, for a two-hop question that names T and
not E (chains.py). General English patterns, each read on the clause from the sentence's start to E:

    T is a 1975 film (written and) directed by E         →  the director of T
    T is the debut album by (American singer) E / from E  →  the artist who recorded T     (a novel: the author, …)
    T is a film based on the novel (of the same name) by E →  the author of the novel on which T is based
    T is a 1935 film starring E.                          →  the star of T                (E alone: no cast list)
    Its founder, E / his father E / the band's lead singer E  →  the founder / father / lead singer of T
    T was the (eldest) son of E                           →  the father of T              (E's page says "he")
    T is the wife of E / T is married to E                →  the husband of T             (else the spouse of T)
    T is a member of (the pop group) E                    →  the group T is a member of   (E's page: a group)
    T is the lead singer of the band E                    →  the band whose lead singer is T
    T is a (wholly owned) subsidiary of E                 →  the parent company of T
    T is part of E                                        →  the region T is part of      (E's page: a region)
    T is a school located in E (based, headquartered, set) →  the city where T is located  (E's page: a city)
    T is a village in E / a mall in Charlotte, E           →  the country / state where T is located
    T was born in E                                       →  the birthplace of T
    T is named after E                                    →  the person T is named after

E must be the clause's whole object: not one of a list ("by E and F", "E, bassist F"), not a possessor ("E's"),
not cut from a longer name ("Paris, Maine", "Daniel Greene of New Haven"), not inside a quotation or an aside.
Between T and the pattern nothing may be about something else ("a sequel to the film directed by E"), and a
pronoun or a possessive stands for T only when nothing else is named before E. `page` is E's own page (what it
says E is, "he" or "she": chains.EntityPage).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from deepresearch.agent.reader import Unit, normalise

from .corpus import SynthDoc
from .description_words import (
    AGENTS,
    BAND_ROLES,
    COPULAS,
    COUNTRIES,
    FILLER,
    GROUPS,
    KIN,
    KINSHIP,
    LOCATED,
    MODIFIERS,
    NATIONALITY,
    NUMBERS,
    OTHER,
    PARENTS,
    PLACES,
    REGIONS,
    RELATIONS,
    SINGLING,
    SITES,
    WORKS,
)
from .facts import unit_spans
from .prose import TOKEN, person_page, plain_title

if TYPE_CHECKING:
    from .chains import EntityPage

_T = "ŦŦ"  # the page's title, as one word of the clause


@dataclass(frozen=True)
class _Clause:
    words: list[str]  # the sentence's words before E (T as one word, asides and quotation marks left out)
    doc: SynthDoc
    title: str
    page: EntityPage | None  # E's own page
    names: tuple[str, ...]  # the other names before E (a pronoun before E may be theirs, not the page's)
    after: str  # the sentence after E
    alone: bool  # E is the whole object: no list, no qualifier after it
    placed: bool  # no qualifier after E, or one its page confirms ("Paris, France")


def prose_description(entity: str, start: int, unit: Unit, doc: SynthDoc,
                      page: EntityPage | None = None) -> str | None:
    """How the sentence `unit` of `doc` describes the entity at `start` relative to the page's title, or None."""
    title = plain_title(doc.title)
    if not title or normalise(title) == normalise(entity) or title.lower().startswith("list of"):
        return None
    prefix, after = unit.text[:start], unit.text[start + len(entity):]
    quoted = prefix.count('"') % 2 or prefix.count("“") > prefix.count("”") or prefix.count("``") > prefix.count("''")
    if ";" in prefix or prefix.count("(") != prefix.count(")") or quoted \
            or re.match(r"['’]s\b|\s+of\s+[A-Z]|-\w", after):
        return None  # E in an aside or a quotation, a possessor, or part of a longer name
    qualified = re.match(r"\s*,\s*[A-Z\"“]", after)
    text = re.sub(rf"(?<!\w){re.escape(title)}(?!\w)", f" {_T}", re.sub(r"\s*\([^()]*\)", "", prefix), flags=re.I)
    words = [w for w in TOKEN.findall(text) if w not in ('"', "“", "”", "`", "'", "''")]
    if not words or _listed(after) and not _qualifies(after, page):
        return None
    names = tuple(t for t, kind, at, _ in unit_spans(unit, doc) if kind == "name" and at + len(t) <= start
                  and normalise(t) not in normalise(title) and prefix[:at].count("(") <= prefix[:at].count(")")
                  and not (at == 0 and re.fullmatch(r"[A-Z][a-z]+(?:ed|ing)|Born|Built|Set", t)))  # "Directed by E"
    clause = _Clause(words, doc, title, page, names, after, alone=not qualified,
                     placed=not qualified or _qualifies(after, page))
    # A title with E's name in it gives E away ("Eddie Fisher Sings"), unless E is family ("the father of …").
    shared = set(re.findall(r"[A-Z][\w'’-]{3,}", entity)) & set(re.findall(r"[\w'’-]+", title))
    for rule in (_by_phrase, _starring, _possessive, _kinship, _member, _place, _named):
        found = rule(clause)
        if found and (not shared or rule in (_kinship, _possessive)):
            return found
    return None


def _listed(after: str) -> bool:
    """E is one of a list: "E and F", "E, F", "E, bassist F", "E and veterinarian F" (not "E and produced by F")."""
    m = re.match(r"\s*(?:,\s*(?:and\s+|&\s*)?|and\s+|&\s*|/\s*)((?:[a-z][\w-]*\s+){0,3})[A-Z\"“]", after)
    return m is not None and not any(w.endswith(("ed", "ing")) or w in OTHER | COPULAS.keys() | {
        "by", "in", "then", "also", "here", "it", "they", "he", "she", "has", "had"} for w in m.group(1).split())


def _qualifies(after: str, page: EntityPage | None) -> bool:
    """"Paris, France": E's page names the place after the comma; or E is a state and a country follows."""
    m = re.match(r"\s*,\s*([A-Z][\w.’'-]*(?:\s+[A-Z][\w.’'-]*)*)", after)
    return m is not None and page is not None and (page.says(m.group(1)) or m.group(1) in COUNTRIES
                                                   and page.kind(PLACES) in REGIONS)


def _kind(c: _Clause, kinds: tuple[str, ...] = GROUPS + PLACES) -> str | None:
    return c.page.kind(kinds) if c.page is not None else None


def _about(words: list[str], doc: SynthDoc) -> int | None:
    """How many words the subject takes when the clause is about the page (its title, a pronoun, "the band")."""
    first = words[0].lower() if words else ""
    if words and (words[0] == _T or first in ("it", "they") or first in ("he", "she") and person_page(doc)):
        return 1
    lead = re.split(r"(?<=[a-z)])\.\s", doc.text[:400], maxsplit=1)[0]
    if first == "the" and len(words) > 1 and (words[1] == _T or re.fullmatch(r"[a-z]+", words[1]) and words[1]
                                              not in OTHER and re.search(rf"\b{words[1]}\b", lead)):
        return 2  # "The film …" when the page's first sentence says it is a film
    return None


def _predicate(words: list[str], doc: SynthDoc, copula: bool = False) -> str | None:
    """The clause is "T [is] …" with nothing between about something else: its tense ("is", "was"; "" with no
    copula), or None."""
    n = _about(words, doc)
    rest = [w.lower() for w in words[n or 0:]]
    if n is None or any(w in OTHER or not re.match(r"[\w'’.\-–—/&]", w) or w in ("in", "at") and not (
            i + 1 < len(rest) and (rest[i + 1][:1].isdigit() or rest[i + 1] in NUMBERS)) for i, w in enumerate(rest)):
        return None  # "in 1975", "in three acts" may stand between, "in the series" may not
    tense = next((COPULAS[w] for w in rest if w in COPULAS), "")
    return None if copula and not tense else tense


def _tail(words: list[str]) -> tuple[list[str], list[str]]:
    """The clause before E, split into its head and what describes E right before it ("the American singer")."""
    i = len(words)
    while i > 0 and len(words) - i < 7 and re.fullmatch(r"[\w'’.\-/]+", words[i - 1]) and words[i - 1] != _T \
            and words[i - 1].lower() not in OTHER | {"by", "in", "starring", "stars", "named", "its", "his", "her",
                                                      "their"} \
            and (words[i - 1] != "and" or i >= 2 and words[i - 2].islower() and i < len(words)):
        i -= 1
    return words[:i], words[i:]


def _agents(lower: list[str]) -> tuple[list[str], int]:
    """The agent verbs the clause ends with ("written, produced and directed"), last first, and where they start.
    "co-written" counts in the list, not as what E is: "directed and co-written by E" → the director."""
    def agent(word: str) -> bool:
        return word in AGENTS or word.startswith("co-") and word[3:] in AGENTS
    agents, i = [], len(lower)
    while i > 0 and agent(lower[i - 1]):
        agents.append(lower[i - 1])
        i -= 1
        j = i
        while j > 0 and lower[j - 1] in ("and", ","):
            j -= 1
        if j == i or j == 0 or not agent(lower[j - 1]):
            break
        i = j
    return [a for a in agents if a in AGENTS], i


def _by_phrase(c: _Clause) -> str | None:
    """"… directed by E", "written and directed by the Austrian director E", "a novel by E", "an album from E"."""
    head, tail = _tail(c.words)
    if not c.alone or not head or head[-1].lower() not in ("by", "from"):
        return None
    via, head = head[-1].lower(), head[:-1]
    lower = [w.lower() for w in head]
    if via == "from":  # "T is the third studio album from E" (not "a single from the album E")
        if len(lower) < 2 or WORKS.get(lower[-1]) != "recorder" or any(w.lower() in WORKS for w in tail):
            return None
        return f"the artist who recorded {c.title}" if _predicate(head[:-1], c.doc, copula=True) else None
    if based := _based_on(head, c):
        return based
    while len(lower) >= 2 and lower[-2] in ("in", "of") and lower[-1][:1].isdigit():  # "formed in 2005 by E"
        head, lower = head[:-2], lower[:-2]
    agents, i = _agents(lower)
    if i < len(lower):  # the clause ends with agent verbs
        if not agents or i > 0 and lower[i - 1] in ("executive", "co", "-", "additional"):
            return None  # "co-written by E", "executive produced by E": one of several, or not the producer
        rest = head[: i - 1] if i > 0 and head[i - 1] == "," else head[:i]
        character = "character" in [w.lower() for w in rest] or re.search(r"\bcharacter\b", c.doc.text[:300])
        if agents[0] in ("played", "portrayed") and not character:
            return None  # an actor plays a character, not a film
        if not rest:  # "Directed by E, it stars …": the participle leads the clause about the page
            if c.names or not re.match(rf"\s*,\s+(?:it|they|the [a-z]+|{re.escape(c.title)})\s+[a-z]+", c.after,
                                       re.IGNORECASE):
                return None
        elif _predicate(rest, c.doc) is None and not (character and _about(rest, c.doc) and not c.names):
            return None  # "T is a fictional character in …, played by E" is still about T
        if agents[0] in ("led", "coached", "managed") and tail and tail[-1].lower() in ("coach", "manager"):
            return f"the {'head ' if 'head' in [w.lower() for w in tail] else ''}{tail[-1].lower()} of {c.title}"
        return {"recorded": f"the artist who recorded {c.title}", "played": f"the actor who played {c.title}",
                "portrayed": f"the actor who played {c.title}"}.get(agents[0], f"the {AGENTS[agents[0]]} of {c.title}")
    # "T is a 2003 album (released in 2004) by E", "an opera in three acts by E": the page is the work
    if len(lower) >= 3 and lower[-3] == "in" and lower[-1] in ("act", "acts"):
        head, lower = head[:-3], lower[:-3]
    if lower and lower[-1] in ("released", "issued"):
        head, lower = head[:-1], lower[:-1]
    if not lower or lower[-1] not in WORKS or _predicate(head[:-1], c.doc, copula=True) is None:
        return None
    maker = "recorder" if lower[-2:] == ["extended", "play"] else WORKS[lower[-1]]
    if maker == "director" and any(w.lower() not in ("the", "director", "filmmaker") and not NATIONALITY.match(w)
                                   for w in tail):
        return None  # "a film by producer E": not its director
    return f"the artist who recorded {c.title}" if maker == "recorder" else f"the {maker} of {c.title}"


def _based_on(head: list[str], c: _Clause) -> str | None:
    """"T is a 1955 film (…,) based on the (1964) novel (of the same name) by E"."""
    lower = [w.lower() for w in head]
    if lower[-4:] in (["of", "the", "same", "name"], ["of", "the", "same", "title"]):
        head, lower = head[:-4], lower[:-4]
    if not lower or WORKS.get(lower[-1]) != "author" or "on" not in lower:
        return None
    i = len(lower) - 1 - lower[::-1].index("on")
    if i < 1 or lower[i - 1] != "based" or not all(w.lower() in ("the", "a", "an", "short") or w[:1].isdigit()
                                                    or NATIONALITY.match(w) for w in head[i + 1:-1]):
        return None
    rest = head[: i - 2] if i >= 2 and head[i - 2] == "," else head[: i - 1]
    return f"the author of the {lower[-1]} on which {c.title} is based" if _predicate(rest, c.doc) is not None else None


def _starring(c: _Clause) -> str | None:
    """"T is a 1935 film starring E.", "It stars E as Loretta, a role …": E is its one star."""
    rest = c.words[:-1]
    while rest and rest[-1].lower() in (",", "and"):
        rest = rest[:-1]
    if not c.alone or c.words[-1].lower() not in ("starring", "stars") or _predicate(rest, c.doc) is None:
        return None
    alone = re.match(r"(?:\s+as\s+[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*)*)?"  # "as Loretta"
                     r"\s*(?:$|[.)]|,\s+(?:a|an|the|who|which|whose)\b)", c.after)
    return f"the star of {c.title}" if alone else None


def _possessive(c: _Clause) -> str | None:
    """"Its founder, E", "his father E", "the band's lead singer E", "T's drummer E"."""
    body = c.words[:-1] if c.words[-1] == "," else c.words
    i = len(body)
    while i > 0 and len(body) - i < 3 and re.fullmatch(r"[a-z][a-z\-]*", body[i - 1]) \
            and body[i - 1] not in ("its", "his", "her", "their"):
        i -= 1
    role = [w.lower() for w in body[i:]]
    if not c.alone or c.names or i == 0 or not role or not all(w in MODIFIERS for w in role[:-1]) \
            or role[-1] not in RELATIONS and not (role[-1] in KIN and SINGLING & set(role)):
        return None
    owner = body[i - 1]
    m = re.fullmatch(r"([a-z]+)['’]s", owner)  # "the band's": the page's own kind of thing
    if owner.lower() in ("his", "her") and person_page(c.doc) \
            or owner.lower() in ("its", "their") and (i == 1 or _about(c.words, c.doc) is not None) \
            or owner in (f"{_T}'s", f"{_T}’s") \
            or m and i >= 2 and body[i - 2].lower() == "the" and re.search(rf"\b{m.group(1)}\b", c.doc.text[:300]):
        return f"the {' '.join(role)} of {c.title}"
    return None


def _kinship(c: _Clause) -> str | None:
    """"T was the (eldest) son of (actor) E" → E is T's parent; "T was the wife of E", "T is married to E" → E is
    T's spouse (a parent only when E's page says "he" or "she")."""
    words, _ = _tail(c.words)
    if len(words) < 3 or c.names or not c.alone:
        return None
    if [w.lower() for w in words[-2:]] == ["married", "to"]:
        words = [*words[:-2], "wife", "of"]  # the same clause, read as "T is the spouse of E"
    if words[-1].lower() != "of" or words[-2].lower() not in KINSHIP:
        return None
    i = len(words) - 2
    while i > 0 and words[i - 1].lower() in SINGLING | {"first", "second", "third", "elder", "younger", "older"}:
        i -= 1
    i -= i > 0 and words[i - 1].lower() in ("the", "a")
    rest = words[: i - 1] if i > 0 and words[i - 1] == "," else words[:i]  # "T was a noblewoman, daughter of E"
    if _predicate(rest, c.doc, copula=True) is None:
        return None
    gender = c.page.gender() if c.page is not None else ""
    if KINSHIP[words[-2].lower()] == "parent":
        return f"the {'father' if gender == 'm' else 'mother'} of {c.title}" if gender else None
    return f"the {({'m': 'husband', 'f': 'wife'}[gender]) if gender else 'spouse'} of {c.title}"


def _member(c: _Clause) -> str | None:
    """"T is a member of (the pop group) E", "T is the lead singer of the band E", "a subsidiary of E", "T is part
    of E"."""
    head, tail = _tail(c.words)
    lower = [w.lower() for w in head]
    if len(lower) < 3 or lower[-1] != "of" or c.names:
        return None
    j = len(head) - 2
    while j > 0 and re.fullmatch(r"[a-z\-]+", head[j - 1]) and head[j - 1] not in COPULAS:
        j -= 1
    tense = _predicate(head[:j], c.doc, copula=True)
    role, noun = [w for w in lower[j:-1] if w not in FILLER], lower[-2]
    if tense is None or not all(w in MODIFIERS for w in role[:-1]) or "as" in lower[j:-1] and lower[j] != "best":
        return None
    if noun in PARENTS and c.alone and role == [noun]:
        return f"the parent company of {c.title}"
    kind = next((w.lower() for w in reversed(tail) if w.lower() in GROUPS + PLACES), None) or _kind(c)
    if noun == "member" and kind in GROUPS and c.alone:
        return f"the {kind} {c.title} {tense} a {' '.join(role)} of"
    if noun in BAND_ROLES and kind in GROUPS and c.alone:
        return f"the {kind} whose {' '.join(role)} {tense} {c.title}"
    if noun == "part" and role == [noun] and kind in PLACES and c.placed:
        return f"the {'city' if kind == 'capital' else kind} {c.title} {tense} part of"
    return None


def _place(c: _Clause) -> str | None:
    """"T is a school located in E", "Based in E, the company …", "It is set in E", "T is a village in E", "T is a
    station based in Fayetteville, E", "He was born in (Far West,) E": the city (state, …) where T is located, or
    was born. E's page says what E is; "place" when it does not say, unless a city stands before E."""
    words, city = c.words, []
    if words[-1] == ",":  # "in CITY, E": E is where the city is
        j = len(words) - 1
        while j > 0 and len(words) - j <= 5 and words[j - 1] != _T and (words[j - 1][:1].isupper()
                                                                         or words[j - 1] in ("of", "de", "la")):
            j -= 1
        words, city = words[:j], words[j:-1]
        if not city or not city[0][:1].isupper():
            return None
    if len(words) < 2 or words[-1].lower() != "in" or not c.placed \
            or not all(normalise(n) in normalise(" ".join(city)) for n in c.names):
        return None
    verb = words[-2].lower()
    if verb == "born" and not city:  # "He was born in E", "T is an American singer born in E"
        ok = words[0].lower() in ("he", "she") or words[0] == _T
        return f"the birthplace of {c.title}" if ok and _predicate(words[:-2], c.doc) is not None else None
    kind = _kind(c, PLACES)
    if city and kind not in (*REGIONS, "country", "republic", "kingdom", "island"):
        return None  # "in Charlotte, E": E is larger than a city
    if kind is None and c.page is not None and c.page.main_sense and not city:
        kind = "place"  # the page titled E is its main sense: a place, as the sentence says
    if verb in LOCATED:
        rest = words[:-2]
    elif verb in SITES and not person_page(c.doc):
        rest, verb = words[:-1], "located"
    else:
        return None
    subject = rf"(?:it|they|the [a-z]+|{re.escape(c.title)})\s+(?:is|was|are|were|has|had|\w+ed|\w+s)\b"
    if kind is None or not rest and (city or not re.match(rf"[^,.]*,\s+{subject}", c.after, re.IGNORECASE)):
        return None  # "Headquartered in E, the company …" leads a clause about the page
    tense = _predicate(rest, c.doc, copula=True) if rest else "is"
    kind = {"capital": "city", "republic": "country", "kingdom": "country"}.get(kind, kind)
    return f"the {kind} where {c.title} {tense} {LOCATED[verb]}" if tense else None


def _named(c: _Clause) -> str | None:
    """"T is named after E", "named for the poet E": the person (E's page: a person) T is named after."""
    head, _ = _tail(c.words)
    lower = [w.lower() for w in head]
    if len(lower) < 3 or lower[-2] not in ("named", "renamed") or lower[-1] not in ("after", "for") or c.names \
            or not c.alone or (tense := _predicate(head[:-2], c.doc, copula=True)) is None:
        return None
    kind = "person" if c.page is not None and c.page.person else _kind(c)
    return f"the {kind} {c.title} {tense} named after" if kind else None
