"""What kind of answer a question wants: one span ("factoid": who, when, which, how many, yes/no, "A or B") or a
report ("open": explain, describe, compare, summarise, list, pros and cons, how something works, why).

A cheap rule on the question's wording, general English: an open question asks for the shape of an answer
(an explanation, a comparison, a list) rather than naming what to find. Anything the rule does not recognise
is factoid, today's path, so a question it misses still gets an answer span.

`question_parts` names the things an open question covers one by one ("the differences between A and B": A and
B), so the follow-up hop can search each on its own, as it does the options of an "A or B" question.
`speaks_of` says whether a sentence itself names what a question is about, not only the page it stands on.
"""

from __future__ import annotations

import re
from typing import Literal

from ..document.text import without_disambiguation
from .spans import name_spans
from .words import content_words, stem

QuestionKind = Literal["factoid", "open"]

# Words a request may start with before the question proper ("Please explain …", "Can you describe …").
_POLITE = re.compile(r"^(?:(?:please|kindly|now|so|ok(?:ay)?)[,\s]+|(?:can|could|would|will) you (?:please )?|"
                     r"i (?:want|would like|'d like) (?:you )?to (?:know )?|help me (?:to )?)+")
# A request that opens with what it wants done.
_OPEN_VERBS = frozenset({
    "explain", "describe", "compare", "contrast", "summarise", "summarize", "summary", "list", "outline", "discuss",
    "analyse", "analyze", "evaluate", "review", "assess", "elaborate", "overview", "characterise", "characterize",
    "enumerate", "illustrate", "clarify",
})
_OPEN_OPENERS = re.compile(
    r"^(?:tell me (?:about|how|why|what)|what do (?:you|we) know about|give (?:me )?(?:an? )?(?:overview|summary|"
    r"account|list|description|explanation|comparison|rundown)|write (?:me )?(?:an? )?(?:report|summary|overview|"
    r"essay)|what (?:is|was) (?:the )?(?:significance|importance|impact|history|background) of|"
    r"what (?:are|were) (?:the |some )?(?:main|key|major|most important|primary|different|various|pros|cons|"
    r"advantages|disadvantages|benefits|drawbacks|risks|causes|effects|consequences|implications|"
    r"characteristics|features|arguments|reasons|lessons|steps|stages|types|kinds|ways|factors|differences|"
    r"similarities|uses|applications|examples|symptoms|properties|functions|principles|components|challenges|"
    r"problems|criticisms|goals)\b|what (?:are|were) some\b|"
    r"what (?:impact|effects?|influence) (?:did|does|do|has|have|had)|in what ways?|"
    r"what (?:is|are|was|were) (?:the )?(?:main |key |major |biggest |real )?(?:differences?|distinctions?|"
    r"similarit(?:y|ies)) (?:between|among)|"
    r"how (?:to|should|would|can (?:i|we|one|you)|do (?:i|we|you|people)|does one)\b|why\b)"
)
# Phrases that make a question open wherever they stand.
_OPEN_PHRASES = re.compile(
    r"\b(?:differences|similarities|distinctions) (?:between|among)\b|\bcompar(?:e|ed|ing|ison)\b|"
    r"\bdiffer(?:s|ed)? (?:from|in)\b|\bdiffer\s*\??$|\bpros and cons\b|\badvantages and disadvantages\b|"
    r"\bbenefits and (?:drawbacks|risks|costs)\b|\bstrengths and weaknesses\b|\bup ?sides? and down ?sides?\b|"
    r"\b(?:vs\.?|versus)\b"
)
# "How does X work?" and kin: a question about a mechanism or a relation, not a quantity or a manner of one event.
_HOW_WORKS = re.compile(
    r"^how (?:does|do|did|is|are|was|were|can|could|would|will) .+? (?:work|works|function|operate|"
    r"affect|affects|impact|influence|relate|compare|differ|different|change|changed|evolve|evolved|develop|"
    r"developed)\b"
)
# "How to Eat, released in which year, …": a title that starts like a request.
_TITLE_HOW_TO = re.compile(r"^How to [A-Z]")


def _plain(question: str) -> str:
    text = " ".join(question.replace("’", "'").split()).lower()
    return _POLITE.sub("", text).strip()


def question_kind(question: str) -> QuestionKind:
    """"open" when the question asks for an explanation, a comparison, a summary or a list; else "factoid"."""
    text = _plain(question)
    if not text or _TITLE_HOW_TO.match(question.strip()):
        return "factoid"
    first = re.match(r"[a-z]+", text)
    if first and first.group() in _OPEN_VERBS and not text.startswith("list of "):
        return "open"
    if _OPEN_OPENERS.match(text) or _HOW_WORKS.match(text) or _OPEN_PHRASES.search(text):
        return "open"
    return "factoid"


# Where an open question names the things it covers: "between A and B", "compare A and/with/to B", "A vs B",
# "how does A differ from B", "how do A and B differ".
_PART_PATTERNS = (
    re.compile(r"\b(?:differences?|similarit(?:y|ies)|distinctions?|contrast|comparison|relationship)\s+"
               r"(?:between|among|of)\s+(?P<parts>.+)$", re.IGNORECASE),
    re.compile(r"\b(?:compare|contrast)\s+(?P<parts>.+)$", re.IGNORECASE),
    re.compile(r"^(?:how|in what ways?)\s+(?:does|do|did|is|are|was|were)\s+(?P<a>.+?)\s+"
               r"(?:differ|different|compare|vary)\s+(?:from|to|with)\s+(?P<b>.+)$", re.IGNORECASE),
    re.compile(r"^(?:how|in what ways?)\s+(?:do|did|are|were)\s+(?P<parts>.+?)\s+(?:differ|compare|vary)\b",
               re.IGNORECASE),
    re.compile(r"(?P<a>[^,:]+?)\s+(?:vs\.?|versus)\s+(?P<b>.+)$", re.IGNORECASE),
)
# Where the things end and the rest of the question begins.
_TAIL = re.compile(r"\s*(?:[;:?!]|,\s*(?:and\s+|but\s+)?(?:how|why|what|which|when|where|who|in|with|for|as|to|"
                   r"especially|particularly|both)\b|\bin terms of\b|\bwith (?:regard|respect) to\b|\bregarding\b|"
                   r"\bwhen it comes to\b|\bas (?:to|regards)\b|\band (?:how|why|what|which|when|where|who)\b|"
                   r"\bin their\b).*$", re.IGNORECASE)
_JOINER = re.compile(r"\s*,\s*(?:and\s+)?|\s+(?:and|with|to|against|vs\.?|versus)\s+", re.IGNORECASE)
_WORD_JOINER = re.compile(r"\s+(?:and|with|to|against|vs\.?|versus)\s+", re.IGNORECASE)
_LEAD = re.compile(r"^(?:what (?:are|were|is|was) )?(?:the |a |an )?(?:main |key |major )?", re.IGNORECASE)
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_MAX_PART_CHARS = 80


def question_parts(question: str) -> list[str]:
    """The things an open question compares or covers one by one, in its order (at least two), or []."""
    text = " ".join(question.split()).rstrip("?.! ")
    text = _POLITE.sub("", text[:1].lower() + text[1:]) if _POLITE.match(text.lower()) else text
    for pattern in _PART_PATTERNS:
        m = pattern.search(text)
        if m is None:
            continue
        groups = m.groupdict()
        if groups.get("parts") is not None:
            # Commas list the things, unless a thing's own name holds one ("University of California, Berkeley
            # and University of California, San Francisco": split at commas, two parts would be the same).
            listed = _TAIL.sub("", groups["parts"])
            splits = [_JOINER.split(listed), _WORD_JOINER.split(listed)]
        else:
            splits = [[_LEAD.sub("", groups["a"]), _TAIL.sub("", groups["b"])]]
        for raw in splits:
            parts = [p for p in (_ARTICLE.sub("", p.strip(" '\"“”‘’")) for p in raw) if p]
            if len(parts) >= 2 and all(len(p) <= _MAX_PART_CHARS for p in parts) and \
                    len({p.lower() for p in parts}) == len(parts):
                return parts
    return []


# Words that frame an open question rather than say what it is about: a sentence holding only these speaks of nothing.
_FRAME_WORDS = frozenset(stem(w) for w in (
    *_OPEN_VERBS, "main", "key", "major", "difference", "differences", "similarity", "similarities", "pros", "cons",
    "advantages", "disadvantages", "benefits", "drawbacks", "history", "overview", "tell", "know", "give", "work",
    "works", "different", "like", "role", "impact", "significance", "ways", "way", "some", "kind", "kinds", "types",
    "between", "among",
    # the kinds of fact an open question asks for ("the uses of X", "the risks of Y"): a quote about X or Y seldom
    # says "uses" or "risks"
    "risks", "causes", "effects", "consequences", "implications", "characteristics", "features", "arguments",
    "reasons", "lessons", "steps", "stages", "factors", "uses", "applications", "examples", "properties",
    "functions", "principles", "components", "challenges", "problems", "criticisms", "goals",
))


def framing_words(question: str) -> frozenset[str]:
    """The stems of an open question that frame it ("list", "pros", "differences", "uses") rather than say what it
    is about; none for a factoid question, whose every word may be what a quote must cover."""
    return _FRAME_WORDS if question_kind(question) == "open" else frozenset()


def speaks_of(question: str, text: str, title: str = "") -> bool:
    """Whether `text` (a quote) names what `question` is about: a word of one of the names the question gives
    ("Lisa Simpson": "Lisa" or "Simpson"), or, when it gives none, one of its content words that is not a request's
    frame ("describe", "differences") — or it stands on that very thing's own page (`title` "Ada Lovelace": its
    "She was born in 1815" speaks of her). "It was directed by Mike B. Anderson" on the page "The Secret War of Lisa
    Simpson" does not speak of Lisa Simpson: the page is an episode's."""
    spans = name_spans(question[:1].lower() + question[1:])
    names = [n for s in spans if (n := {stem(w) for w in content_words(s.text)})]
    wanted = set().union(*names) if names else (
        {stem(w) for w in content_words(question)} - _FRAME_WORDS - {"what", "which", "who", "how", "why"})
    if wanted & {stem(w) for w in content_words(text)}:
        return True
    page = {stem(w) for w in content_words(without_disambiguation(title))}
    return bool(page) and (any(page == n for n in names) if names else page <= wanted)
