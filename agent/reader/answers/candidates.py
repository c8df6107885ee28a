"""Answer candidates: spans of the run's evidence, shaped by what the question asks for.

A 135M model chooses far better than it writes, so the writer's direct answer is picked from a short
list of spans taken from the verified evidence. This module finds those spans and ranks them with
cheap, inspectable features (no model call):

    kind      the question asks for a date/year, a number, a demonym (nationality), or a name; a span
              of another kind is out
    novelty   answers rarely repeat the question ("Who wrote X?" is not answered "X")
    context   the sentence (and its source's title) shares the question's words
    nearness  the span stands close to those shared words inside the sentence
    source    earlier search results first; a span seen in several sentences counts a little more

The same spans name the *bridge entity* of a multi-hop question: the best-ranked name of the first
round's evidence that the question does not mention is what the follow-up hop searches for.
Stdlib only, so it is fast and easy to test.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..document.evidence import EvidenceSentence
from ..document.recency import corrected_from, corrects, is_stamped, stale_value, written_on
from ..document.text import without_disambiguation
from ..language.categories import asks_category, asks_shared, category_spans
from ..language.kinds import (
    ASKS_YEAR,
    amount_or_share,
    answer_kind,
    asked_format,
    asks_count,
    asks_measure,
    asks_money,
    asks_nationality,
    asks_several,
    demonym_spans,
    fits,
    kind_bonus,
    money_label,
    prefers_unit,
    words_answered,
)
from ..language.spans import GENERIC_NAMES, STOP_WORDS, WORD, YEAR, AnswerKind, Span, name_spans, question_names
from ..language.words import BIRTH, DEATH, content_words, life_date, stem
from .anchors import anchored, anchors
from .classes import category_fit, shared_classes, source_categories
from .classes import name_key as _norm
from .links import Links
from .name_edges import common_words, inner_capitals, opening_common_word, without_opening_word
from .offices import NOT_A_PERSON, holder_of, holders, is_office
from .structure import asked_words, context_stems, label_match, labelled_spans

_WHO = re.compile(r"^\s*(who|whom|whose)\b|\bto whom\b|\b(who|whom)\s+(is|was|were|are|did|does|do|has|had|should|"
                  r"would|can|could|will)\b|\bwhat (actor|actress|"
                  r"singer|director|player|author|writer|person|man|woman|artist|musician|politician)\b",
                  re.IGNORECASE)
_WHERE = re.compile(r"^\s*where\b|\bwhere (is|was|were|are|did|does)\b", re.IGNORECASE)
_PLACE_CUE = frozenset({"in", "at", "near", "from", "of"})


@dataclass
class Candidate:
    text: str
    score: float
    quote: str  # the sentence it was taken from
    source: int  # search rank of that sentence's source
    url: str = ""  # that source
    count: int = 1
    features: dict[str, float] = field(default_factory=dict)  # what the score weighs (see W)
    likelihood: float | None = None  # the policy's mean log-likelihood of it (graph/scoring.py); None: not scored


# Feature weights (tuned on pool *train* questions; the eval's dev questions were not looked at).
# "category" (the candidate's own source calls it what the question's "which company" asks for): on the
# 1,103 free-form train questions top-1 115 → 120 / 126 / 130 / 136 / 134 at weight 0.5 / 1 / 2 / 3 / 5.
# "column": the span stands in the table column (or under the key) the question asks for; "row_about": its table row
# names the question's subject (a row is about one thing; the other rows' values are near misses); "later": its unit
# was written last among the candidates' dated units; "corrects": its unit says it replaces what was said before,
# "stale": it is the value a change replaced ("8 bar, not 6.5 bar"; recency.py). They are 0 on Wikipedia prose but for
# a rare "not X", so the weights fitted there are untouched by them (top-1 on 400 pool train questions, simulated
# evidence: 53 before them, 54 after). "anchor": the unit writes the days and codes the question names (anchors.py);
# top-1 on 800 pool train questions 110 / 112 / 110 / 109 at weight 0 / 1 / 2 / 3. "unit_fit": a number's unit
# measures what is asked ("12 psi" for "at what pressure", "6 tonnes" for "how big"; kinds.words_answered): 0 on the
# pool's free-form train questions, userdocs-b's replayed top-1 15 → 17 at weight 0.5, 1 or 2.
W = {"about": 0.5, "relation": 3.0, "near": 1.5, "novel": 2.0, "source": 0.4, "typed": 1.5, "shape": 1.0,
     "kind": 1.0, "bridge": -0.5, "repeats": 0.2, "category": 3.0, "column": 3.0, "later": 1.0, "corrects": 1.0,
     "row_about": 1.5, "stale": -3.0, "stamp": 1.0, "anchor": 1.0, "link": 1.0, "unit_fit": 1.0}
SHARED_CLASS = 2.0  # a class two sources give, for what two things both are (pool train top-1 of 40: 1 → 3)
RECENT_RELATION = 0.25  # share of the question's relation words a unit must hold for its date to count

# For the bridge of a multi-hop question, being named where the question's entities are matters most.
BRIDGE_W = {"about": 2.0, "relation": 0.5, "near": 1.5, "novel": 1.0, "source": 0.0, "kind": 1.0, "repeats": 0.2}


_DATE_STEMS = frozenset(stem(w) for w in ("date", "dates", "year", "years", "time"))
_WH_HEAD = re.compile(r"\b(?:what|which|whose)\s+((?:[\w'’\-]+\s+){0,3}[\w'’\-]+)", re.IGNORECASE)


def asks_person(question: str) -> bool:
    """A who / whom question: its answer names a person."""
    return answer_kind(question) == "name" and _WHO.search(question) is not None


def answer_type_phrase(question: str) -> list[str]:
    """The words naming the answer's type, as the question writes them: "what British rock band" → British,
    rock, band (up to four words after what/which/whose, until a stop word or an auxiliary verb)."""
    m = _WH_HEAD.search(question)
    words: list[str] = []
    for w in m.group(1).split() if m else []:
        if w.lower() in STOP_WORDS or w.lower() in ("did", "does", "do", "is", "was", "were", "are", "has", "had"):
            break
        words.append(w)
    return words


def answer_type_words(question: str) -> set[str]:
    """Stems of the words naming the answer's type: "what British rock band" → british, rock, band.

    Evidence often introduces an answer by its type ("the British rock band Dire Straits"), so a span
    next to these words is likely the one asked for.
    """
    return {stem(w.lower()) for w in answer_type_phrase(question)}


def question_terms(question: str) -> tuple[set[str], set[str]]:
    """(stems of the entity words, stems of the other content words) of a question.

    Entity words (inside capitalised names or quotes) say which sources are about the question;
    the other words ("founded", "died", "county") say which sentence of them holds the answer,
    and the answer stands close to them.
    """
    entity: set[str] = set()
    for span in question_names(question):
        entity |= {stem(w) for w in content_words(span.text)}
    words = {stem(w) for w in content_words(question)}
    return entity & words, words - entity


def rank_candidates(question: str, sentences: Iterable[EvidenceSentence], k: int = 5,
                    kind: AnswerKind | None = None, bridges: Iterable[str] = (),
                    weights: dict[str, float] | None = None, follow_links: bool = True) -> list[Candidate]:
    """The k best answer spans of the evidence for the question, best first.

    `bridges`: entities the run searched for in a follow-up hop. A multi-hop question asks about
    something the bridge leads to, so the bridge itself is a poor answer and a sentence of the hop's
    sources that carries the question's relation words is a good place for one. `follow_links`: score
    a source that the evidence about the question names (`linked_titles`) like a hop's; off when
    ranking the bridge itself, whose page is not where the bridge is named.
    """
    kind = kind or answer_kind(question)
    w = weights or W
    bridge_keys = {_norm(b) for b in bridges}
    entity, relation = question_terms(question)
    type_words = answer_type_words(question)
    if kind in ("date", "time"):  # "on what date …": every date answers the word, so "New dates:" says nothing
        relation, type_words = relation - _DATE_STEMS, type_words - _DATE_STEMS
    asks_year = kind == "date" and ASKS_YEAR.search(question) is not None
    measure = kind == "number" and asks_measure(question)
    money = kind == "number" and asks_money(question)
    counting = kind == "number" and not money and asks_count(question)
    unit = kind == "number" and prefers_unit(question)
    asked = asked_words(question)
    pinned = anchors(question)  # the days and codes the question names
    shape = asked_format(question) if kind == "code" else None  # "the MAC address": six hex pairs, nothing else
    tabled: set[tuple[str, str, tuple[str, ...]]] = set()  # (candidate, source, columns): a table counts once
    asks = "person" if kind == "name" and asks_person(question) else \
        "place" if kind == "name" and _WHERE.search(question) else None
    q_stems = entity | relation
    q_words = {stem(m.group().lower()) for m in WORD.finditer(question)}
    q_norm = f" {_norm(question)} "
    sentences = list(sentences)
    linked = linked_titles(sentences, entity) if follow_links else set()
    categories = source_categories(sentences) if type_words and w.get("category") else {}
    best: dict[str, Candidate] = {}
    dates: dict[str, tuple[int, int, int] | None] = {}  # when each candidate's unit was written (recency.py)
    stale: set[str] = set()  # candidates some unit calls replaced
    nationality = kind == "name" and asks_nationality(question)
    lists = asks_several(question)
    # "documentary film" is no name span: a kind asked, each unit's class phrases, read once
    classes = [category_spans(s.text) for s in sentences] if kind == "name" and asks_category(question) else None
    # asked what two things both are, a class that sources of two things give is the one they share
    shared = shared_classes(sentences, classes) if classes is not None and asks_shared(question) else set()
    ordinary = common_words(sentences)
    common = ordinary if kind == "name" else frozenset()
    capitals = inner_capitals(sentences) if kind == "name" else frozenset()
    links = Links(sentences, q_stems, ordinary) if w.get("link") else None
    for index, sent in enumerate(sentences):
        # a cell's unit or currency may be in its column's name
        # a kind asked ("what type of films"): the class phrases answer, not the names beside them
        spans = [(s, "") for s in demonym_spans(sent.text)] if nationality else \
            [(s, "") for s in classes[index]] if classes is not None else \
            [(s, label) for s, label in labelled_spans(sent, lists)
             if fits(s, kind, asks == "place", measure and not label, money and not money_label(label))
             and not (counting and amount_or_share(sent.text, s))
             and (shape is None or shape.fullmatch(s.text))]
        if not spans:
            continue
        if kind == "date" and not asks_year:  # "2024" of "June 1, 2024" is no date of its own unless a year is asked
            spans = _whole_dates(spans)
        around = context_stems(sent)  # a row's column names and the unit's heading
        written = written_on(sent)
        correcting = corrects(sent.text)
        right_from = corrected_from(sent.text) if correcting else None
        s_words = [(m.group().lower(), m.start()) for m in WORD.finditer(sent.text)]
        title_stems = {stem(w) for w in content_words(sent.title)}
        title_key = _norm(without_disambiguation(sent.title))
        rel_hits = [(stem(w), pos) for w, pos in s_words if stem(w) in relation]
        unit_stems = {stem(w) for w, _ in s_words} | title_stems | around
        ent_shared = unit_stems & entity
        # the unit, its heading, columns and title name none of what the question asks for (see "label_other")
        asked_unsaid = bool(asked) and not asked & unit_stems
        # A hop's source is about the bridge, which the evidence named beside the question's entities.
        about = 1.0 if sent.hop or title_key in linked else len(ent_shared) / len(entity) if entity else 0.0
        rel_share = len({w for w, _ in rel_hits} | (around & relation)) / len(relation) if relation else 0.0
        anchor = anchored(pinned, f"{sent.text} {sent.heading} {sent.title}")
        for span, label in spans:
            span = without_opening_word(sent.text, span, common, capitals)
            key = _norm(span.text)
            if not key or (key in GENERIC_NAMES and not nationality) or opening_common_word(sent.text, span, common):
                continue
            span_stems = {stem(w) for w in key.split()}
            if span.kind == "date" and len(span_stems) > 1:  # "22 June 2025" for "our 2025 show": its year places it
                span_stems = {w for w in span_stems if not YEAR.fullmatch(w)} or span_stems
            # the words naming the answer's type may be the answer's own ("Calder Heating" for "which heating firm")
            novelty = 1.0 - len(span_stems & (q_stems - type_words)) / len(span_stems)
            if f" {key} " in q_norm or novelty == 0.0:
                continue  # the question's own words are not its answer
            end = span.start + len(span.text)
            near = min((abs(pos - span.start) if pos < span.start else pos - end
                        for _, pos in rel_hits if not span.start <= pos < end), default=None)
            nearness = 0.0 if near is None else 1.0 / (1.0 + near / 25.0)
            if span.kind == "date" and (life := life_date(sent.text, span.start)):
                if life & relation:
                    nearness, rel_share = 1.0, len({w for w, _ in rel_hits} | (life & relation)) / len(relation)
                elif (BIRTH | DEATH) & relation:  # a birth date for a question about a death, or back
                    nearness = 0.0
            features = {
                "about": about, "relation": rel_share, "near": nearness, "novel": novelty,
                "source": 1.0 / (1 + sent.source), "typed": _typed(sent.text, span, end, type_words),
                "shape": _shape(sent.text, span, asks),
                "kind": kind_bonus(span, kind, asks_year, measure, unit) + SHARED_CLASS * (key in shared),
                "bridge": float(key in bridge_keys), "hop": float(sent.hop), "lead": float(sent.position == 0),
                "subject": float(key == title_key), "early": 1.0 - span.start / max(1, len(sent.text)),
                "category": category_fit(categories.get(key), type_words),
                "column": label_match(label, asked) if label else 0.0,
                # its cell's column (its line's key) names another thing than the one asked, which its unit never
                # names ("Phone: …" for "what is the fax number"): no weight, but the confidence reads it
                "label_other": float(asked_unsaid and bool(label) and not label_match(label, asked)),
                "row_about": about if sent.kind == "row" else 0.0,
                "corrects": float(right_from is not None and span.start >= right_from), "anchor": anchor,
                "link": links.link(index, sent.url, span.text) if links else 0.0,
                "stale": float(stale_value(sent.text, span.start, end, correcting)),
                "unit_fit": float(kind == "number" and bool(q_words & {stem(x) for x in words_answered(span.text)})),
                # A log line's own stamp is the date of what the line records ("2024-04-02 18:40 … arrived").
                "stamp": float(kind == "date" and span.kind == "date" and span.start <= 2 and is_stamped(sent.text)),
            }
            score = sum(w.get(name, 0.0) * value for name, value in features.items())
            old = best.get(key)
            # The same value in many rows of one table is no corroboration: a table counts once.
            seen_here = sent.kind == "row" and (key, sent.url, sent.header) in tabled
            if sent.kind == "row":
                tabled.add((key, sent.url, sent.header))
            if features["stale"]:
                stale.add(key)
            count = (old.count if old else 0) + (0 if seen_here else 1)
            if old is None or score > old.score:
                best[key] = Candidate(span.text, score, sent.text, sent.source, sent.url, count, features)
                dates[key] = written
            else:
                old.count = count
    # A later note wins over a stale (or undated) one, among the candidates whose units say most of what the question
    # asks (a recent log line about something else is no newer answer); where no unit is dated, nothing changes.
    # A value one unit says was replaced ("the old 4721 no longer works") is stale where another states it plainly.
    for key in stale:
        if not best[key].features["stale"]:
            best[key].features["stale"] = 1.0
            best[key].score += w.get("stale", 0.0)
    rival = {key for key, c in best.items() if c.features["relation"] >= RECENT_RELATION}
    latest = max((dates[key] for key in rival if dates.get(key)), default=None)
    for key, cand in best.items():
        cand.features["repeats"] = math.log(cand.count)
        cand.features["later"] = float(latest is not None and len(rival) > 1 and key in rival and dates[key] == latest)
        cand.score += w.get("repeats", 0.0) * cand.features["repeats"] + w.get("later", 0.0) * cand.features["later"]
    if asks == "person":
        _put_holders(best, sentences, w)
    return best_first(best.values())[:k]


# a range or a size written as one value: "V2–V4", "1.8 m × 1.2 m", "6 x 4", "10 to 12"
_JOINED_VALUE = re.compile(r"\S\s*[–—×]\s*\S|\d\s*x\s*\d|\S to \S")


def best_first(candidates: Iterable[Candidate]) -> list[Candidate]:
    """Best first. A tie goes to the earlier source, then to a range or size: two spans that start together and score
    alike are such a value and the piece it starts with ("1.8 m × 1.2 m" and "1.8 m", "V2–V4" and "V2")."""
    return sorted(candidates, key=lambda c: (-c.score, c.source, _JOINED_VALUE.search(c.text) is None))


def _put_holders(best: dict[str, Candidate], sentences: list[EvidenceSentence], w: dict[str, float]) -> None:
    """A "who" question's office candidates ("Deputy Site Warden") give their place to the person the evidence says
    holds the office (offices.py), cited by the unit that pairs them and scored as a person where the office stood."""
    named = [key for key, cand in best.items() if is_office(cand.text)]
    offices = holders(sentences) if named else {}
    for key in named:
        cand = best[key]
        if (found := holder_of(cand.text, offices)) is None:
            continue
        person, index = found
        unit = sentences[index]
        # scored as a person where the office stood; not as the bridge when the run searched the office (the holder is
        # where that hop leads), and linked to the question by the office's own unit
        features = {**cand.features, "shape": 1.0, "bridge": 0.0, "link": max(cand.features.get("link", 0.0),
                                                                                cand.features.get("relation", 0.0))}
        score = cand.score + sum(w.get(f, 0.0) * (features[f] - cand.features.get(f, 0.0))
                                 for f in ("shape", "bridge", "link"))
        del best[key]
        old = best.get(person_key := _norm(person))
        if old is None or score > old.score:
            best[person_key] = Candidate(person, score, unit.text, unit.source, unit.url,
                                         old.count if old else 1, features)


def linked_titles(sentences: list[EvidenceSentence], entity: set[str]) -> set[str]:
    """Titles of sources that a sentence about the question's entities names: the bridge of a two-hop
    question when the first round already found its page ("The City Heiress is a play by Aphra Behn"
    and the source "Aphra Behn"). Such a source is scored like a follow-up hop's."""
    if not entity:
        return set()
    titles = {_norm(without_disambiguation(s.title)) for s in sentences} - {""}
    named: set[str] = set()
    for sent in sentences:
        words = {stem(m.group().lower()) for m in WORD.finditer(sent.text)}
        words |= {stem(w) for w in content_words(sent.title)}
        if not words & entity:
            continue
        named |= {key for span in name_spans(sent.text) if (key := _norm(span.text)) in titles}
    return named


def _whole_dates(spans: list[tuple[Span, str]]) -> list[tuple[Span, str]]:
    """The spans less the dates that stand inside a longer date of the same unit."""
    dates = [(s.start, s.start + len(s.text)) for s, _ in spans if s.kind == "date"]
    return [(s, label) for s, label in spans if s.kind != "date" or not any(
        a <= s.start and s.start + len(s.text) <= b and b - a > len(s.text) for a, b in dates)]


def _shape(sentence: str, span: Span, asks: str | None) -> float:
    """1 when the span looks like what a who/where question asks for: a person's name, a place."""
    if asks == "person":
        words = span.text.split()
        return float(2 <= len(words) <= 4 and not any(c.isdigit() for c in span.text)
                     and not any(w.lower().strip(".,") in NOT_A_PERSON for w in words))
    if asks == "place":
        if span.kind == "place":  # "above the sink": a place said without a name
            return 1.0
        before = WORD.findall(sentence[max(0, span.start - 8):span.start])
        return float(bool(before) and before[-1].lower() in _PLACE_CUE)
    return 0.0


def _typed(sentence: str, span: Span, end: int, type_words: set[str]) -> float:
    """1 when the words just before (or after) the span name the answer's type, or the span's own last word does
    ("Calder Heating" for "which heating firm", "Mississippi River" for "which river"), else 0."""
    if not type_words:
        return 0.0
    words = span.text.split()
    if len(words) > 1 and stem(words[-1].lower().strip(".,")) in type_words:
        return 1.0
    before = [stem(w.lower()) for w in WORD.findall(sentence[max(0, span.start - 40):span.start])][-3:]
    after = [stem(w.lower()) for w in WORD.findall(sentence[end:end + 20])][:1]
    return 1.0 if type_words & set(before + after) else 0.0
