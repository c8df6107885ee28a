"""A fact of a document: one answer span of one unit, with the question that asks for it.

A fact knows what it is about (`subject`: a page's title, a table row's key cell, a sentence's subject), what is
asked of it (`attribute`: a column, a field's key, a predicate) and its question as a frame with the subject left
open (`{s}`), so a two-hop question can put a description of the subject in its place (chains.py). The answer
is a span of the source unit, verbatim: known by construction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from deepresearch.agent.reader import EvidenceSentence, Unit, answer_kind, labelled_spans

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
