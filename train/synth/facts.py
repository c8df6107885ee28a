"""A fact of a document: one answer span of one unit, with the question that asks for it.

A fact knows what it is about (`subject`: a page's title, a table row's key cell, a sentence's subject), what is
asked of it (`attribute`: a column, a field's key, a predicate) and its question as a frame with the subject left
open (`{s}`), so a two-hop question can put a description of the subject in its place (chains.py). The answer
is a span of the source unit, verbatim: known by construction.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from deepresearch.agent.reader import (
    EvidenceSentence,
    Unit,
    answer_kind,
    labelled_spans,
    normalise,
    without_disambiguation,
)

from .corpus import SynthDoc

SUBJECT = "{s}"


@dataclass(frozen=True)
class Fact:
    doc_id: str
    title: str
    unit: str  # the source unit, verbatim
    answer: str  # a span of `unit`
    kind: str  # the answer's kind: date, number, code, name (agent/reader/spans.py)
    subject: str
    attribute: str
    frame: str  # the question with SUBJECT where the subject goes
    template: str  # which rule made it: row, field, lead, passive, active, life
    where: str = ""  # the table's or the note's context the question names ("inventory"), if any

    @property
    def question(self) -> str:
        return self.frame.replace(SUBJECT, self.subject)

    def asking(self, subject: str) -> str:
        """The question about another description of the same subject."""
        return self.frame.replace(SUBJECT, subject)


def evidence_of(unit: Unit, doc: SynthDoc) -> EvidenceSentence:
    return EvidenceSentence(unit.text, 0, doc.title, kind=unit.kind, header=unit.header, heading=unit.heading,
                            key=unit.key)


_NUMBERING = re.compile(r"^\s*(?:\d+(?:\.\d+)*[.)]?|[A-Z][.)])\s+")


def context_of(unit: Unit, doc: SynthDoc) -> str:
    """Where a unit stands, as a question can name it: its heading (without its numbering), else the title."""
    for text in (unit.heading, doc.title):
        text = _NUMBERING.sub("", " ".join(text.replace("**", "").split())).strip(" :-–—")
        if len(text) >= 3:
            return text
    return ""


def label_words(label: str) -> str:
    """A column or key as words: "unit_cost_eur" → "unit cost eur"."""
    return " ".join(label.replace("_", " ").replace("**", "").split()).strip(" :").lower()


def kind_fits(question: str, kind: str) -> bool:
    """The reader takes the question to ask for the answer's kind (a place is asked for as a name)."""
    asked = answer_kind(question)
    return asked == kind or (kind == "place" and asked == "name")


def first_fitting(frames: list[str], subject: str, kind: str) -> str | None:
    """The first frame whose question the reader reads as asking for `kind`."""
    return next((f for f in frames if kind_fits(f.replace(SUBJECT, subject), kind)), None)


def unit_spans(unit: Unit, doc: SynthDoc) -> list[tuple[str, str, int, str]]:
    """(text, kind, start, label) of every answer span of the unit, as the reader finds them."""
    return [(s.text, s.kind, s.start, label) for s, label in labelled_spans(evidence_of(unit, doc))]


# What a definite subject may call a page's subject besides its own kind ("the group" for a band).
_SAME_KIND = [frozenset(g.split()) for g in (
    "band group duo trio quartet ensemble", "film movie picture", "song single track ballad",
    "album record ep lp mixtape", "series miniseries show programme program sitcom serial",
    "company firm corporation business manufacturer retailer conglomerate", "team club franchise side squad",
    "school college academy university institution institute",
    "town city village community municipality settlement borough township hamlet suburb",
    "newspaper paper daily tabloid", "magazine periodical journal publication", "book novel novella memoir",
    "ship vessel boat submarine destroyer frigate cruiser battleship steamer liner", "channel network",
    "church cathedral chapel basilica parish", "organization organisation association society charity",
    "airport airfield aerodrome", "road highway route motorway freeway", "tournament competition championship",
    "battle siege engagement", "game videogame", "memorial monument statue")]
# A kind that stands for any of several ("the building" of a hotel's page).
_BUILDINGS = frozenset({"house", "hotel", "courthouse", "tower", "hall", "mansion", "skyscraper", "museum", "library",
                        "theatre", "theater", "castle", "cathedral", "church", "chapel", "temple", "mosque", "station",
                        "hospital", "centre", "center", "arena", "stadium", "mall", "school", "palace", "villa",
                        "cottage", "farmhouse", "lighthouse", "bridge", "complex", "home"})
_BROADER = dict.fromkeys(("building", "structure", "property", "venue", "landmark"), _BUILDINGS)
# "a type of pastry", "a species of moth": the kind is what follows "of" as well.
_CLASSIFIERS = frozenset({"type", "kind", "form", "variety", "assortment", "species", "genus", "style", "family",
                          "brand", "line", "class", "series", "collection", "genre", "range", "title", "name"})
_KIND_STOP = frozenset({"in", "on", "at", "by", "from", "for", "with", "to", "that", "which", "who", "whose", "where",
                        "when", "about", "between", "since", "as", "after", "before", "under", "within", "near",
                        "than", "based", "located", "situated", "consisting", "featuring", "starring", "including",
                        "popular", "native", "endemic", "famous", "common", "known", "out", "up"})
_PARTICIPLE = re.compile(r"[\w-]{4,}(?:ed|ing)|(?:\w+-)?(?:written|found|made|known|built|held|sung|shown|set|led)")


def plain_title(title: str) -> str:
    """A page title without its disambiguation, as the reader strips it: "The Gate (song)" → "The Gate"."""
    return without_disambiguation(title).strip()


def page_kinds(doc: SynthDoc) -> frozenset[str]:
    """What the page says its subject is: its title's disambiguation ("(1944 film)"), the last word of its title
    ("Warwick Mall"), and, when its first sentence is about the title, the head nouns of its "is a …" ("an American
    rock band from …" → band; "an American singer, songwriter and actress" → singer, songwriter, actress)."""
    kinds: set[str] = set()
    m = re.search(r"\(([^()]*)\)\s*$", doc.title)
    kinds.update(re.findall(r"[a-z]+", m.group(1).lower()) if m else ())
    plain = plain_title(doc.title).split()
    if len(plain) > 1:
        kinds.add(plain[-1].lower())
    first = re.sub(r"\s*\([^()]*\)", "", _first_sentence(doc)) if names_title(doc) else ""
    m = re.search(r"\b(?:is|was|are|were)\s+(?:one of\s+)?(?:a|an|the)\s+([^.;:]{0,160})", first)
    for n, part in enumerate((m.group(1) if m else "").split(",")):
        words = re.findall(r"[\w'’-]+", part)
        if n and len(words) > 3:
            break  # not a list of kinds ("a type of drink, both alcoholic and not")
        heads, stop = _heads(words)
        kinds.update(w for h in heads for w in (h, re.sub(r"ies$", "y", h), re.sub(r"(?<=[^s])s$", "", h)))
        if stop:
            break
    return frozenset(kinds)


def _first_sentence(doc: SynthDoc) -> str:
    return re.split(r"(?<!\bInc)(?<!\bLtd)(?<!\bCo)(?<!\bJr)(?<!\bSt)(?<=[a-z)])\.\s", doc.text[:600], maxsplit=1)[0]


def names_title(doc: SynthDoc) -> bool:
    """The page's first sentence is about its title: it names it before its verb ("The Somali flag is …" on the page
    "Somalis", "The Houston Rockets are …" on "Houston Rockets all-time roster" do not), so "it" may stand for it."""
    lead = _first_sentence(doc)
    verb = re.search(r"\b(?:is|was|are|were|has|had|have)\b", lead)
    title = normalise(plain_title(html.unescape(doc.title)).split(",")[0])  # "Guin, Alabama"
    return bool(title) and title in normalise(lead[: verb.start()] if verb else lead)


def _heads(words: list[str]) -> tuple[list[str], bool]:
    """The head nouns of a noun phrase's words ("American rock band", "singer and actress"), and whether the phrase
    stopped before its end (at a preposition, a relative, or a participle after the noun: "band formed in")."""
    heads, head = [], ""
    for i, word in enumerate(words):
        lower, nxt = word.lower(), words[i + 1] if i + 1 < len(words) else ""
        if lower in ("and", "or"):
            heads, head = heads + [head] if head else heads, ""
        elif lower == "of" and head in _CLASSIFIERS:
            heads, head = heads + [head], ""  # "a species of moth": a species and a moth
        elif lower == "of" or lower in _KIND_STOP or head and _PARTICIPLE.fullmatch(lower) \
                and (not nxt or nxt.lower() in _KIND_STOP | {"and", "or", "of", "by"} or _PARTICIPLE.fullmatch(nxt)):
            return heads + [head] if head else heads, True
        elif word.islower():
            head = lower
    return heads + [head] if head else heads, False


def is_kind(noun: str, doc: SynthDoc) -> bool:
    """`noun` ("the album", "the group") can stand for the page's subject: the page says its subject is one."""
    kinds = page_kinds(doc)
    return any(n in kinds or any(n in g and g & kinds for g in _SAME_KIND) or _BROADER.get(n, set()) & kinds
               for n in {noun.lower(), re.sub(r"(?<=[^s])s$", "", noun.lower())})
