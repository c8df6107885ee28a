"""What kind of thing something is, when a question asks for a kind and not a name.

"What type of films are A and B?", "What profession do A and B have in common?", "What kind of activist is X?":
the answer is a common noun phrase, the class a source puts its subject in ("A is a 2004 British documentary film",
"X was an English singer-songwriter, musician, guitarist, and poet"). Names are no answer to these, and a span
reader of capitalised runs never offers one ("documentary film" is no name).

    asks_category    "what type of films" → "films"; "what profession" → "profession"; else None
    asks_shared      "… have in common", "both …", "… share": the class two things are both in
    category_spans   the class phrases of a sentence: after "is a", "was an", ", a" (an appositive), each item of
                     a list that goes on ("…, musician, guitarist, and poet"), with and without the leading
                     nationality or number ("British documentary film", "documentary film")

English only, and no corpus's vocabulary: the copula and the articles are what every encyclopaedia, manual and
note uses to say what a thing is.
"""

from __future__ import annotations

import re

from .spans import Span

# "what type of X", "which kind of X", "what genre", "what profession", "what sort of X"
_KIND_OF = re.compile(r"\b(?:what|which)\s+(?:[a-z]+\s+)?(?:type|kind|sort|form|variety|class|category)s?\s+of\s+"
                      r"([a-z][a-z\-]*)", re.IGNORECASE)
_KIND_NOUN = re.compile(r"\b(?:what|which)\s+(profession|occupation|job|career|genre|trade|breed|species)s?\b",
                        re.IGNORECASE)

# What a class phrase follows: a copula with its article, or an appositive's article after a comma.
_OPENER = re.compile(r"\b(?:is|was|are|were|became|becomes|remains|remained|as)\s+(?:an?|one\s+of\s+the)\s+"
                     r"|,\s+an?\s+(?=[a-z0-9])", re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z0-9][\w'’\-&]*|[^\w\s]")
# Words that end a class phrase: what follows the class ("a film directed by", "a band from", "who …").
_ENDS = frozenset([
    "of", "in", "at", "for", "from", "by", "with", "on", "to", "about", "into", "near", "under", "over", "between",
    "since", "during", "after", "before", "within", "without", "across", "through", "against", "among", "along",
    "around", "behind", "beyond", "than", "like", "whose", "who", "which", "that", "where", "when", "while", "whom",
    "known", "best", "also", "and", "or", "but", "not", "its", "his", "her", "their", "there", "this", "these",
    "those", "then", "is", "was", "are", "were", "has", "have", "had", "be", "been", "being", "one", "first", "now",
    "currently", "still", "originally", "mainly", "primarily", "mostly", "largely", "widely", "often", "later",
    "formerly", "previously", "usually"
])
_PARTICIPLE = re.compile(r"[a-z]+(?:ed|ing|en|wn|rn)|made|built|set|sold|held|run|kept|led|brought|bought|taught")
# What ends an item of a list of classes (", and poet."), not a verb phrase after an appositive (", lives in").
_ITEM_END = frozenset({",", "and", "or", ".", ";", ")", ""})
_MAX_WORDS = 6


def asks_category(question: str) -> str | None:
    """The class the question asks a kind of ("films", "activist", "profession"), or None."""
    if m := _KIND_OF.search(question):
        return m.group(1).lower()
    if m := _KIND_NOUN.search(question):
        return m.group(1).lower()
    return None


_SHARED = re.compile(r"\b(?:in\s+common|both|share|shared|alike)\b", re.IGNORECASE)


def asks_shared(question: str) -> bool:
    """Whether the kind asked is one that two things share ("What profession do A and B have in common?")."""
    return _SHARED.search(question) is not None


def category_spans(sentence: str) -> list[Span]:
    """The class phrases a sentence puts its subject in, each as a span of kind "category"."""
    out: list[Span] = []
    for m in _OPENER.finditer(sentence):
        tokens = [(t.group(), t.start()) for t in _TOKEN.finditer(sentence, m.end())]
        phrase, i = _phrase(tokens, 0)
        out += _forms(phrase)
        # a list that goes on names more classes: "…, musician, guitarist, and poet", "artist and activist"
        while phrase and i + 1 < len(tokens) and tokens[i][0] in (",", "and", "or"):
            j = i + 1 + (tokens[i][0] == "," and tokens[i + 1][0] in ("and", "or"))
            phrase, i = _phrase(tokens, j)
            ends = tokens[i][0] if i < len(tokens) else ""
            if not phrase or not phrase[0][0][:1].islower() or ends not in _ITEM_END:
                break
            out += _forms(phrase)
    return list(dict.fromkeys(out))


def _phrase(tokens: list[tuple[str, int]], i: int) -> tuple[list[tuple[str, int]], int]:
    """The words of a class phrase from token i, and the index where it ends."""
    words: list[tuple[str, int]] = []
    while i < len(tokens) and len(words) < _MAX_WORDS:
        word = tokens[i][0]
        if not word[:1].isalnum() or word.lower() in _ENDS:
            break
        nxt = tokens[i + 1][0] if i + 1 < len(tokens) else ""
        # a participle that takes an object or an agent ends the class ("a film directed by", "a documentary
        # starring Maija DiGiorgio"); one before a noun is part of it ("an animated film")
        if words and _PARTICIPLE.fullmatch(word) and (not nxt[:1].isalnum() or nxt.lower() in _ENDS
                                                      or nxt[:1].isupper()):
            break
        words.append(tokens[i])
        i += 1
    return words, i


def _forms(words: list[tuple[str, int]]) -> list[Span]:
    """A class phrase as written less a leading number ("2004 British documentary film"), and less its leading
    nationality or other capitalised qualifier too ("documentary film")."""
    while words and (words[0][0][:1].isdigit() or words[0][0].lower() in ("the", "a", "an")):
        words = words[1:]
    if not words or not any(w[:1].islower() for w, _ in words):
        return []  # a name, not a class: the name spans have it
    spans = [_span(words)]
    plain = words
    while plain and plain[0][0][:1].isupper():
        plain = plain[1:]
    if plain and plain != words:
        spans.append(_span(plain))
    return spans


def _span(words: list[tuple[str, int]]) -> Span:
    start = words[0][1]
    text = " ".join(w for w, _ in words)
    return Span(text, "category", start)
