"""Deciding yes/no questions that ask whether two things share something ("Are A and B from the same
country?", "Are A and B in the same family?") from what each one's own source says.

The 135M writer answers "yes" to nearly every yes/no question. For these the evidence usually settles
it: each thing's own page names its value next to the word the question asks about ("a genus … in the
family Cucurbitaceae", "a prefecture-level city in Jiangxi province"), or, for a country or nationality,
in a demonym or a country name ("an American musician", "a band from Cardiff, Wales"). Equal values
→ "yes", different → "no"; the trace keeps the sentence that decided (a bare "no" is not a claim a quote
supports, so the answer carries no citation and the points cite the sources). No
decision (None) when the question names other than two things, or either has no own source or no value.

Measured on the 18 pool *train* yes/no questions it applies to, with the question's own search as the
evidence: it decided 7, all right (all "no"); the writer's constant "yes" was right on 4 of the 18, with
the rule 11. Checked afterwards on the 7 such dev questions: it decided 2, one right ("both American
directors": no), one wrong ("both American writers" for a Romanian-born American: yes, gold no).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..document.evidence import EvidenceSentence
from ..document.text import normalise
from ..language.countries import COUNTRY_OF, COUNTRY_WORDS, country_mentions
from ..language.spans import GENERIC_NAMES, WORD, name_spans, question_names
from ..language.words import stem
from .comparison import OptionChoice, is_own_source, name_key

# "the same country", "of the same nationality", "in the same family": the noun compared on.
_SAME = re.compile(r"\bthe\s+same\s+([a-z]{3,})\b", re.IGNORECASE)
_NATIONALITY = frozenset({"country", "nationality", "nation"})
# Words that mean the same thing to compare on ("the same band" is named "group Alphaville" too).
_SYNONYMS = {"band": {"band", "group"}, "group": {"band", "group"}, "company": {"company", "studio", "studios"}}
# The own sentences read for a value: the first few say what a thing is and where it is from.
_LEAD_SENTENCES = 3
# A value belongs to the compared word when at most this many words stand between them
# ("the family Lamiaceae", "in northeastern Jiangxi province").
_WINDOW = 2

_BOTH = re.compile(rf"\bboth\s+(?:of\s+)?(?:an?\s+)?({COUNTRY_WORDS})\b", re.IGNORECASE)


def compared_noun(question: str) -> str | None:
    """What the question asks two things to share ("country", "family"), if it asks that."""
    match = _SAME.search(question)
    return match.group(1).lower() if match else None


def named_things(question: str) -> list[str]:
    """The names the question mentions, whole ("Out of Place", not its parts "Out" and "Place"), in order."""
    spans = question_names(question)
    whole = [s for s in spans if not any(o is not s and o.start <= s.start and
                                         s.start + len(s.text) <= o.start + len(o.text) and o.text != s.text
                                         for o in spans)]
    return list(dict.fromkeys(s.text for s in whole))


def _country(sentence: str) -> str | None:
    """The first country a sentence names, by a demonym ("an American musician") or by name ("Cardiff,
    Wales"), capitalised as written."""
    return next((m.country for m in country_mentions(sentence)), None)


def _value_near(noun: str, sentence: str, own_name: str) -> str | None:
    """The name standing next to the compared word in the sentence ("family Lamiaceae", "Jiangxi
    province"), other than the thing's own name; the nearest if several."""
    wanted = {stem(w) for w in _SYNONYMS.get(noun, {noun})}
    at = [m.span() for m in WORD.finditer(sentence) if stem(m.group().lower()) in wanted]
    own = name_key(own_name)
    best: tuple[int, str] | None = None
    for span in name_spans(sentence):
        key = name_key(span.text)
        if not key or key in GENERIC_NAMES or key in own or own in key:
            continue
        end = span.start + len(span.text)
        for start, stop in at:
            gap = sentence[end:start] if start >= end else sentence[stop:span.start] if span.start >= stop else None
            if gap is None:
                continue
            words = len(WORD.findall(gap))
            if words <= _WINDOW and (best is None or words < best[0]):
                best = (words, key)
    return None if best is None else best[1]


def _value(noun: str, thing: str, sentences: list[EvidenceSentence]) -> tuple[str, EvidenceSentence] | None:
    own = [s for s in sentences if is_own_source(thing, s)][:_LEAD_SENTENCES]
    for sent in own:
        value = _country(sent.text) if noun in _NATIONALITY else _value_near(noun, sent.text, thing)
        if value is not None:
            return value, sent
    return None


def asked_country(question: str) -> str | None:
    """The country of "Were A and B both English?" ("united kingdom"), if the question asks that."""
    match = _BOTH.search(question)
    return COUNTRY_OF[match.group(1).lower()] if match else None


def decide_shared(question: str, sentences: Iterable[EvidenceSentence]) -> OptionChoice | None:
    """"yes" or "no" when both things' own sources give what the question compares: their X for "the
    same X", their country for "both <demonym>"."""
    country = asked_country(question)
    noun = "country" if country else compared_noun(question)
    if noun is None:
        return None
    things = [t for t in named_things(question) if t.lower() not in COUNTRY_OF]
    if len(things) != 2:
        return None
    sentences = list(sentences)
    values = [_value(noun, thing, sentences) for thing in things]
    if country is not None:  # one of them from elsewhere settles "no"; "yes" needs both
        differs = next((v for v in values if v is not None and v[0] != country), None)
        if differs is not None:
            return OptionChoice("no", differs[1].text, differs[1].url, "shared")
    if any(v is None for v in values):
        return None
    answer = "yes" if len({normalise(v[0]) for v in values if v is not None}) == 1 else "no"
    sent = values[0][1]
    return OptionChoice(answer, sent.text, sent.url, "shared")
