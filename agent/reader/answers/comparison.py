"""Choosing between a question's alternatives ("Which was formed first, A or B?") from the evidence.

A 135M model handed both options and the findings mostly picks the first option it sees. The
evidence usually settles the choice by rule, so the rule decides, and the sentence that decided is
the answer's citation:

    order     "first / earlier / older" vs "later / more recent / younger": the year each option's
              own source gives first (its founding, birth or release year); the earlier or later wins
    count     "more / larger / fewer … <noun>" ("Which genus has more species?"): the number each
              option's sentences put next to that noun ("a genus of about 120 species"); the larger
              (or smaller) wins
    measure   a comparative ("heavier", "cheaper", "the longer valve", "the deposit bigger") over table rows: the
              number each option's row has under the column the question's words (or the comparative's
              dimension: heavier → weight) name; the larger (or smaller) wins
    property  anything else ("Which is located in India?"): how many of the question's remaining
              words each option's best sentence carries; the option carrying at least two more wins
              (or, when the question has one such word, the only option carrying it)

An option's sentences are those of a source titled with its name, or that name it. No decision (None)
when an option has no evidence, the years are equal, or the property scores tie; the writer's model
then chooses as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ..document.evidence import EvidenceSentence
from ..document.text import normalise, without_disambiguation
from ..document.units import row_cells
from ..language.comparatives import MEASURES
from ..language.spans import YEAR
from ..language.words import DEATH, content_words, life_date, stem

Order = Literal["earliest", "latest"]
# "shared": shared_property.py; "polarity": yes_no.py
Rule = Literal["order", "count", "measure", "property", "shared", "polarity"]

_EARLIEST = re.compile(r"\b(first|earlier|earliest|older|oldest|before)\b", re.IGNORECASE)
_LATEST = re.compile(r"\b(later|latest|more recent(ly)?|most recent(ly)?|younger|youngest|newer|newest|last)\b",
                     re.IGNORECASE)
# Measured on 109 pool train questions: one shared word more decided no better than a coin (10 of 21
# right), two or more did (11 of 13). With one such word, carrying it decides: 2 of 2 right on train, 2 of 2 on dev.
PROPERTY_MARGIN = 2
_DIED = re.compile(r"\b(died|dies|death|passed away)\b", re.IGNORECASE)
_YEAR = re.compile(rf"\b({YEAR.pattern})\b")
# "more species", "the larger population", "fewer than … members": the comparative and the noun counted.
_COUNT = re.compile(r"\b(?i:(?P<cue>more|most|larger|largest|bigger|biggest|greater|greatest|higher|highest|"
                    r"fewer|fewest|less|least|smaller|smallest|lower|lowest))\s+(?:\w+\s+)?(?P<noun>[a-z]{3,})\b")
_FEWER = frozenset({"fewer", "fewest", "less", "least", "smaller", "smallest", "lower", "lowest"})
_NUMBER_WORDS = {w: i for i, w in enumerate((
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"))}
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9}
_AMOUNT = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?:\s+(thousand|million|billion))?(?!\w)"
                     r"|\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)
# A count belongs to its noun when at most this many words stand between them ("120 accepted species",
# "population of 24,256,800").
_COUNT_WINDOW = 3
# Question words that say how to compare, not what to compare on.
_FRAME = frozenset({"which", "who", "what", "whom", "located", "locate", "one", "two", "between", "both"})


_COMPARATIVE = re.compile(r"\b(" + "|".join(MEASURES) + r")\b", re.IGNORECASE)
_EXPENSIVE = re.compile(r"\b(more|less) expensive\b", re.IGNORECASE)


@dataclass(frozen=True)
class OptionChoice:
    option: str
    quote: str  # the sentence that decided
    url: str
    rule: Rule


def asked_order(question: str) -> Order | None:
    """Whether the question asks which came first (earliest) or last (latest), if it asks either."""
    if _LATEST.search(question):
        return "latest"
    if _EARLIEST.search(question):
        return "earliest"
    return None


def option_sentences(option: str, sentences: Iterable[EvidenceSentence]) -> list[EvidenceSentence]:
    """The evidence about one option: its own source's sentences first (in order), then any naming it."""
    key = normalise(option)
    if not key:
        return []
    own, naming = [], []
    for sent in sentences:
        if is_own_source(option, sent):
            own.append(sent)
        elif f" {key} " in f" {normalise(sent.text)} ":
            naming.append(sent)
    return own + naming


def is_own_source(option: str, sent: EvidenceSentence) -> bool:
    """Whether the sentence comes from the option's own source: its title is the option's name, give or
    take an article and a disambiguation ("The Wild (film)" is the option "Wild")."""
    return bool(sent.title) and name_key(sent.title) == name_key(option)


def name_key(name: str) -> str:
    return re.sub(r"^(the|a|an) ", "", normalise(without_disambiguation(name)))


def _first_year(sentences: list[EvidenceSentence], death: bool) -> tuple[int, EvidenceSentence] | None:
    """The first year the option's sentences give: its founding, birth or release year, as a lead
    sentence states it; for a question about dying, the first year marked as a death."""
    for sent in sentences:
        for m in _YEAR.finditer(sent.text):
            if not death or life_date(sent.text, m.start()) == DEATH:
                return int(m.group()), sent
    return None


def _by_order(order: Order, death: bool, options: list[str],
              about: dict[str, list[EvidenceSentence]]) -> OptionChoice | None:
    # The option's own source first; a sentence that merely names it may date something else.
    years = {o: _first_year([s for s in about[o] if is_own_source(o, s)], death) or _first_year(about[o], death)
             for o in options}
    if any(y is None for y in years.values()):
        return None
    dated = sorted(((y[0], o, y[1]) for o, y in years.items() if y is not None), reverse=order == "latest")
    if dated[0][0] == dated[1][0]:
        return None
    _, option, sent = dated[0]
    return OptionChoice(option, sent.text, sent.url, "order")


def asked_count(question: str) -> tuple[str, bool] | None:
    """The stem of the noun the question counts and whether fewer wins ("more species" → ("speci", False))."""
    match = _COUNT.search(question)
    if match is None or match.group("noun") in {"than", "the", "and"}:
        return None
    return stem(match.group("noun")), match.group("cue").lower() in _FEWER


def _amount(m: re.Match[str]) -> float:
    """The value of an `_AMOUNT` match: "120", "24,256,800", "1.2 million", "three"."""
    if m.group(3):
        return float(_NUMBER_WORDS[m.group(3).lower()])
    return float(m.group(1).replace(",", "")) * _SCALE.get((m.group(2) or "").lower(), 1)


def _count_near(noun: str, sentence: str) -> float | None:
    """The number standing within a few words of the noun in the sentence, if any (the nearest)."""
    nouns = [m.span() for m in re.finditer(r"[A-Za-z]+", sentence) if stem(m.group().lower()) == noun]
    best: tuple[int, float] | None = None
    for m in _AMOUNT.finditer(sentence):
        # the words between the number and the noun, on whichever side of it the noun stands
        between = min((len(re.findall(r"[A-Za-z]+", sentence[m.end():start] if start >= m.end()
                                      else sentence[end:m.start()])) for start, end in nouns), default=None)
        if between is None or between > _COUNT_WINDOW:
            continue
        if not m.group(3) and _YEAR.fullmatch(m.group(1)):
            continue  # "the 1988 Olympic bronze medalist" dates the medal, it does not count medals
        value = _amount(m)
        if best is None or between < best[0]:
            best = (between, value)
    return None if best is None else best[1]


def _by_count(noun: str, fewer: bool, options: list[str],
              about: dict[str, list[EvidenceSentence]]) -> OptionChoice | None:
    counts: dict[str, tuple[float, EvidenceSentence]] = {}
    for option in options:
        for sent in about[option]:
            value = _count_near(noun, sent.text)
            if value is not None:
                counts[option] = (value, sent)
                break
    if len(counts) != len(options) or counts[options[0]][0] == counts[options[1]][0]:
        return None
    option = sorted(options, key=lambda o: counts[o][0], reverse=not fewer)[0]
    sent = counts[option][1]
    return OptionChoice(option, sent.text, sent.url, "count")


def asked_measure(question: str) -> tuple[bool, set[str]] | None:
    """Whether the smaller value wins, and the stems a column's name may hold: the question's words and the
    comparative's dimension ("Which telescope is heavier when assembled" → weight, assembled, telescope …)."""
    if (expensive := _EXPENSIVE.search(question)) is not None:
        fewer, dimension = expensive.group(1).lower() == "less", "price"
    elif (match := _COMPARATIVE.search(question)) is not None:
        fewer, dimension = MEASURES[match.group(1).lower()]
    else:
        return None
    words = {stem(w) for w in content_words(question)} - {stem(w) for w in _FRAME}
    return fewer, words | ({stem(dimension)} if dimension else set())


def _row_value(option: str, wanted: set[str],
               sentences: list[EvidenceSentence]) -> tuple[str, float, EvidenceSentence] | None:
    """The option's row's number under the column whose name holds most of `wanted` (the column's name, the value)."""
    best: tuple[int, str, float, EvidenceSentence] | None = None
    for sent in sentences:
        if sent.kind != "row" or not sent.header:
            continue
        cells = row_cells(sent.text)
        if len(cells) != len(sent.header) or not any(name_key(c) == name_key(option) or
                                                      f" {name_key(option)} " in f" {name_key(c)} " for c in cells):
            continue
        for column, cell in zip(sent.header, cells, strict=True):
            number = _AMOUNT.search(cell)
            score = len({stem(w) for w in content_words(column.replace("_", " "))} & wanted)
            if number is None or not score or (best is not None and score <= best[0]):
                continue
            best = (score, column, _amount(number), sent)
    return None if best is None else best[1:]


def _by_measure(question: str, options: list[str], about: dict[str, list[EvidenceSentence]]) -> OptionChoice | None:
    asked = asked_measure(question)
    if asked is None:
        return None
    fewer, wanted = asked
    wanted -= {stem(w) for o in options for w in content_words(o)}
    values = {o: _row_value(o, wanted, about[o]) for o in options}
    found = [v for v in values.values() if v is not None]
    if len(found) != 2 or found[0][0] != found[1][0] or found[0][1] == found[1][1]:
        return None  # the same column for both, and a difference
    option = sorted(options, key=lambda o: values[o][1], reverse=not fewer)[0]
    sent = values[option][2]
    return OptionChoice(option, sent.text, sent.url, "measure")


def _by_property(question: str, options: list[str], about: dict[str, list[EvidenceSentence]]) -> OptionChoice | None:
    named = {stem(w) for o in options for w in content_words(o)}
    wanted = {stem(w) for w in content_words(question)} - named - {stem(w) for w in _FRAME}
    if not wanted:
        return None
    best: dict[str, tuple[int, EvidenceSentence | None]] = {}
    for option in options:
        hits = [(len(wanted & {stem(w) for w in content_words(s.text)}), s) for s in about[option]]
        best[option] = max(hits, key=lambda h: h[0], default=(0, None))
    ranked = sorted(options, key=lambda o: -best[o][0])
    top, runner_up = best[ranked[0]], best[ranked[1]]
    if top[0] - runner_up[0] < min(PROPERTY_MARGIN, len(wanted)) or top[1] is None:
        return None
    return OptionChoice(ranked[0], top[1].text, top[1].url, "property")


def choose_option(question: str, options: list[str], sentences: list[EvidenceSentence]) -> OptionChoice | None:
    """The option the evidence supports, with the sentence that decided; None when it does not say."""
    if len(options) != 2:
        return None
    about = {o: option_sentences(o, sentences) for o in options}
    if not all(about.values()):
        return None
    order = asked_order(question)
    if order is not None:
        return _by_order(order, _DIED.search(question) is not None, options, about)
    counted = asked_count(question)
    if counted is not None:
        choice = _by_count(*counted, options, about)
        if choice is not None:
            return choice
    return _by_measure(question, options, about) or _by_property(question, options, about)
