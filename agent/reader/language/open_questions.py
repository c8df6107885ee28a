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
from .phrasing import direct_question
from .spans import name_spans, question_names
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
    question = direct_question(question)
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
    question = direct_question(question)
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
# Matched as words, not stems: the stem of "contrast" is that of "controller", "compare" that of "company".
_FRAME_WORDS = frozenset((
    *_OPEN_VERBS, "main", "key", "major", "difference", "differences", "similarity", "similarities", "pros", "cons",
    "advantages", "disadvantages", "benefits", "drawbacks", "history", "overview", "tell", "know", "give", "work",
    "works", "different", "like", "role", "impact", "significance", "ways", "way", "some", "kind", "kinds", "types",
    "between", "among",
    # the kinds of fact an open question asks for ("the uses of X", "the risks of Y"): a quote about X or Y seldom
    # says "uses" or "risks"
    "risks", "causes", "effects", "consequences", "implications", "characteristics", "features", "arguments",
    "reasons", "lessons", "steps", "stages", "factors", "uses", "applications", "examples", "properties",
    "functions", "principles", "components", "challenges", "problems", "criticisms", "goals",
    # light verbs: "the pros and cons of becoming a member" (modals were tried: "what attendees must bring" then let
    # an off-topic quote about the attendee guide through, dev/results/open-question-reports/)
    "become", "becoming", "get", "getting",
))


def framing_words(question: str) -> frozenset[str]:
    """The stems of an open question's words that frame it ("list", "pros", "differences", "uses") rather than say
    what it is about; none for a factoid question, whose every word may be what a quote must cover."""
    return _frame_stems(question) if question_kind(question) == "open" else frozenset()


def _frame_stems(text: str) -> frozenset[str]:
    """The stems of `text`'s framing words."""
    return frozenset(stem(w) for w in content_words(text) if w in _FRAME_WORDS)


# A quote speaks of a thing when it names it in its opening words (its subject), not in passing at its end:
# "Iodine-131 … discovered … at the University of California, Berkeley" is not about the university.
_OPENING_WORDS = 8
_OPENING_SHARE = 0.4


def opening_stems(text: str) -> set[str]:
    """The stems of a sentence's opening words (the first 8, or 40 %): where it says what it is about."""
    words = [stem(w) for w in content_words(text)]
    return set(words[:max(_OPENING_WORDS, int(_OPENING_SHARE * len(words)))])


def _longest_names(text: str, opens_sentence: bool = True) -> list[frozenset[str]]:
    """The names `text` gives, each as its stems, the longest of nested ones ("University of California" and
    "Berkeley", not also "University"); a sentence's first word is capitalised whatever it is."""
    spans = name_spans(text[:1].lower() + text[1:] if opens_sentence else text)
    reach = [(s.start, s.start + len(s.text)) for s in spans]
    longest = [s for s, (a, b) in zip(spans, reach, strict=True)
               if not any(c <= a and b <= d and d - c > b - a for c, d in reach)]
    return list(dict.fromkeys(n for s in longest if (n := frozenset(stem(w) for w in content_words(s.text)))))


SubjectKind = Literal["parts", "names", "topic"]
_WH_STEMS = frozenset({"what", "which", "who", "how", "why"})


def _subjects(question: str, frame: frozenset[str]) -> tuple[list[frozenset[str]], SubjectKind]:
    """What an open question is about, each as its stems: the things it covers one by one (a thing's name when it
    gives one: "the loan telescopes T01" is T01), else the names it gives, else its topic (its words that are no
    request's frame: `frame`); and which of the three they are (parts and names a quote must give whole)."""
    stems_of = lambda text: frozenset(stem(w) for w in content_words(text)) - frame  # noqa: E731
    parts = [frozenset().union(*names) if (names := _longest_names(p, opens_sentence=False)) else stems_of(p)
             for p in question_parts(question)]
    if parts := [p for p in parts if p]:
        return parts, "parts"
    if names := _longest_names(question):
        return names, "names"
    topic = stems_of(question) - _WH_STEMS
    return ([topic] if topic else []), "topic"


# Where a title joins its parts: "Spoke & Sprocket – parts we stock (member prices)", "Co-op – Volunteer Handbook".
_TITLE_PARTS = re.compile(r"\s+[–—-]\s+|\s*[:|·(\[]\s*|\s*[)\]]\s*")


def _title_parts(title: str) -> list[tuple[str, ...]]:
    """The parts a title joins, each as its stems in order (the whole title first)."""
    title = without_disambiguation(title)
    parts = [title, *_TITLE_PARTS.split(title)] if _TITLE_PARTS.search(title) else [title]
    return [p for t in parts if (p := tuple(stem(w) for w in content_words(t)))]


def _own_page(asked: set[str], frame: frozenset[str], names: list[tuple[str, ...]], said: set[str], title: str,
              subjects: list[frozenset[str]], named: bool) -> bool:
    """Whether the quote stands on the page of what the question is about: every word of its title is the question's
    and the title names a subject; or a part of the title does — a name the question gives whole, or by its leading
    words ("Spoke & Sprocket" for "the Spoke & Sprocket Co-op"; not "The Simpsons" for Lisa Simpson) — and the quote
    itself says something the question asks beyond that name: a page of the co-op's meeting is the co-op's, but
    its "Parked until the insurance renewal" is not about membership. `asked`: the question's stems, `frame`: its
    framing words' stems, `names`: the names it gives, `said`: the quote's stems."""
    for i, part in enumerate(_title_parts(title)):
        if not set(part) <= asked or not any(set(part) & s for s in subjects):
            continue
        if named and not any(set(n) <= set(part) or len(part) >= 2 and n[:len(part)] == part for n in names if n):
            continue
        rest = asked - frame - set(part) - {w for n in names for w in n}
        if i == 0 or not rest or rest & said:  # i == 0: the whole title
            return True
    return False


def _names_in_order(question: str) -> list[tuple[str, ...]]:
    """The names a question gives, each as its stems in order."""
    return [tuple(stem(w) for w in content_words(s.text)) for s in question_names(question)]


def speaks_of(question: str, text: str, title: str = "") -> bool:
    """Whether `text` (a quote) is itself about what `question` is about: it stands on that thing's own page (`title`
    "Ada Lovelace": its "She was born in 1815" speaks of her), or it names the thing — a name whole, or a word of an
    unnamed topic — in its opening words, where a sentence says what it is about. "It was directed by Mike B.
    Anderson" on the page "The Secret War of Lisa Simpson" does not speak of Lisa Simpson, nor does "The Port of San
    Francisco …" of "the University of California, San Francisco"."""
    question = direct_question(question)
    frame = _frame_stems(question)
    subjects, kind = _subjects(question, frame)
    named = kind != "topic"
    asked, names = {stem(w) for w in content_words(question)}, _names_in_order(question)
    words = {stem(w) for w in content_words(text)}
    if _own_page(asked, frame, names, words, title, subjects, named):
        return True
    # Naming what the question is about is not enough when the question asks something of it: "SPOKE & SPROCKET
    # CO-OP -- WORKSHOP LOG 2024 …" is no pro or con of membership. (A compared thing's own lines are what a
    # comparison wants: no such demand.)
    beyond = asked - frame - _WH_STEMS - {w for n in names for w in n}
    if kind == "names" and beyond and not beyond & words:
        return False
    opening = opening_stems(text)
    for subject in subjects:
        covered = subject & words
        if (covered == subject if named else covered) and covered & opening:
            return True
    return False


def asks_beyond_names(question: str, query: str) -> bool:
    """Whether a step's query searches something the question asks besides the names it gives: "Spoke & Sprocket
    Co-op" alone, under "List the chains the co-op stocks", finds the co-op's pages, and its volunteers' rota is about
    that query but not about chains. (A question comparing things searches each by its name: `question_parts`.)"""
    question = direct_question(question)
    names = {stem(w) for s in question_names(question) for w in content_words(s.text)}
    asked = {stem(w) for w in content_words(question)} - names
    return bool(({stem(w) for w in content_words(query)} - names) & asked)
