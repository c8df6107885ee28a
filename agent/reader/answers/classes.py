"""What the sources say things are: a source's lead names its subject's class ("Dunkin' Donuts is an American doughnut
company"), which a "which company" question's candidate can be checked against, and a class two sources give is what
two things both are. Also the key two writings of one name share."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..document.evidence import EvidenceSentence
from ..document.text import without_disambiguation
from ..language.spans import STOP_WORDS, WORD, Span
from ..language.words import stem


def name_key(text: str) -> str:
    """A name's words, lower-cased, without articles: the key its writings share."""
    return " ".join(m.group().lower() for m in WORD.finditer(text) if m.group().lower() not in ("a", "an", "the"))


_CATEGORY = re.compile(r"\b(?:is|was|are|were)\s+(?:a|an|the|one of the)\s+((?:[\w'’\-]+\s+){0,5}[\w'’\-]+)")


def source_categories(sentences: Iterable[EvidenceSentence]) -> dict[str, set[str]]:
    """What each source's lead says its subject is ("Dunkin' Donuts is an American doughnut company"
    → {american, doughn, compa}), by the source's title: a candidate that is a source's subject has
    a type the question's "which company" can be checked against."""
    out: dict[str, set[str]] = {}
    for sent in sentences:
        if sent.position != 0 or not sent.title:
            continue
        m = _CATEGORY.search(sent.text)
        if m is None:
            continue
        words = []
        for w in m.group(1).split():
            if w.lower() in STOP_WORDS:
                break
            words.append(stem(w.lower()))
        out.setdefault(name_key(without_disambiguation(sent.title)), set()).update(words)
    return out


def shared_classes(sentences: list[EvidenceSentence], classes: list[list[Span]]) -> set[str]:
    """The class phrases (`classes`, a unit's each) that units of two or more sources give ("musician" on Chris
    Jericho's page and on Gary Barlow's)."""
    sources: dict[str, set[str]] = {}
    for sent, spans in zip(sentences, classes, strict=True):
        for span in spans:
            sources.setdefault(name_key(span.text), set()).add(sent.url)
    return {key for key, urls in sources.items() if len(urls) > 1}


def category_fit(category: set[str] | None, type_words: set[str]) -> float:
    """+1 when the candidate's own source calls it what the question asks for, −1 when it calls it
    something else, 0 when no source read says what it is."""
    if not category or not type_words:
        return 0.0
    return 1.0 if category & type_words else -1.0
