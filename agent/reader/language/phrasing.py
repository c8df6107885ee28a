"""The direct question inside the ways a person asks one.

    "Do you know what the fax number is?"               → "What is the fax number?"
    "Can you tell me who runs the Monday puppy class?"  → "Who runs the Monday puppy class?"
    "Tell me the gate code." / "I need the gate code"   → "What is the gate code?"
    "Any idea if the hall is free on the 14th?"         → "Is the hall free on the 14th?"

The reader's rules read a question's first words: an auxiliary first makes it a yes/no question, "who" a person
question, "what … number" a code. Wrapped in a request they misread it ("Do you know what …" opens with "Do": yes or
no). These rules are English question forms, not any corpus's phrasing: a request wrapped around an embedded question
(whose statement word order is put back: "what the fax number is" → "what is the fax number"), "if" / "whether" for a
yes/no question, and a request naming the thing wanted. A request for a report ("Tell me about …", "Can you explain …")
is left to `open_questions`; a question already direct is returned as it is.

A question typed all in lower case ("who runs the monday puppy class") names nothing to rules that know a name by its
capitals. `cased_like` writes its words as the evidence writes them inside its prose sentences ("Monday"), where the
evidence writes them capitalised more often than not. Headings, table rows and "Key: value" lines are not counted:
notes capitalise common words there ("Power Cut", "Account Manager"). With the reader alone, lower-cased pool train
questions right 147 → 165 (169 as written), lower-cased notes tuning sets 64 → 60 right but unanswerable "not found"
22 → 25 of 30 (dev/results/question-phrasing/).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

from .spans import STOP_WORDS

_GREETING = r"(?:(?:hi|hey|hello|ok|okay|so|um|quick question)\b[,:!.]?\s+)*"
# The requests an embedded question or a wanted thing follows; "please" and a comma may come either side.
_REQUEST = (
    r"(?:(?:do|does) (?:you|anyone|anybody|someone|somebody) (?:happen to )?know|"
    r"(?:do|does) (?:you|anyone|anybody) have (?:any )?(?:idea|clue)|(?:any|no) idea|"
    r"(?:can|could|would|will) (?:you|someone|anyone|somebody) (?:please )?(?:tell|show|remind|let) me(?: know)?|"
    r"(?:can|could|would|will) (?:you|someone|anyone|somebody) (?:please )?"
    r"(?:find|work|figure|look|check)(?: out| up)?|"
    r"(?:can|could|may) i (?:ask|check)|"
    r"i(?:'d| would) (?:like|love) to know|i (?:want|need|wanted|needed) to (?:know|find out|check)|"
    r"i(?:'m| am) (?:trying to (?:find out|work out|remember)|wondering|not sure)|i (?:was )?wonder(?:ing|ed)?|"
    r"(?:please )?(?:tell|show|remind|let) me(?: know)?|(?:please )?(?:find|work|figure|look|check)(?: out| up)?|"
    r"i (?:need|want)|i(?:'m| am) looking for|give me|get me|find me)"
)
_GREETED = re.compile(rf"^{_GREETING}", re.IGNORECASE)
_WRAPPED = re.compile(rf"^(?:please[,\s]+)?{_REQUEST}(?:[,\s]+please)?[,:\s]+(?P<rest>.+?)[\s?.!]*$", re.IGNORECASE)
_WH = re.compile(r"(?:what|which|who|whom|whose|where|when|why|how)\b", re.IGNORECASE)
_IF = re.compile(r"(?:if|whether)\s+(?P<clause>.+)$", re.IGNORECASE)
# The words a noun phrase opens with: "the gate code", "our VAT number".
_DETERMINER = r"(?:the|our|my|your|their|his|her|its|this|that|these|those)"
# An embedded "what the fax number is": the bare wh-word, a phrase, and its copula last.
_COPULA_LAST = re.compile(rf"^(?P<wh>what|who|where|when)\s+(?P<np>{_DETERMINER}\b.+?|it|they|he|she)\s+"
                          r"(?P<be>is|are|was|were)$", re.IGNORECASE)
_AUXILIARY = re.compile(r"\b(?:is|are|was|were|can|could|will|would|should|shall|has|have|had|do|does|did|must|may|"
                        r"might)\b", re.IGNORECASE)
# A thing wanted, named by its phrase; not "about …" (a report).
_THING = re.compile(rf"{_DETERMINER}\s+\S", re.IGNORECASE)


# A new sentence begins after ".", "!" or "?" with a word sentences open with, not a name's next word ("Ignite!
# Learning, Inc").
_OPENERS = ("i|i'm|i've|i'd|i'll|my|our|we|we're|we've|you|your|it|it's|its|he|she|they|this|that|these|there|the|a|"
            "an|what|what's|which|who|who's|whom|whose|where|when|why|how|is|are|was|were|do|does|did|can|could|would|"
            "will|should|has|have|had|any|please|tell|thanks|thank|cheers|ta|much|just|also|so|ok|okay|hi|hey|if|and|"
            "but|or|not|no|yes|sorry")
_SENTENCES = re.compile(rf"(?<=[.!?])\s+(?=(?:{_OPENERS})(?![\w'’]))", re.IGNORECASE)
# What a person adds after asking that asks nothing: thanks.
_THANKS = re.compile(r"^(?:(?:many |great |huge )?thanks?(?: (?:you|a lot|so much|in advance|heaps))?|thank you\b.*|"
                     r"cheers|ta|much appreciated|appreciate it|please)[\s.!]*$", re.IGNORECASE)


@lru_cache(maxsize=4096)
def direct_question(question: str) -> str:
    """The question a request wraps, asked directly; the question itself when it is no such request.

    The sentence that asks is the last one with a question mark; sentences before it tell and stay ("I need the plate
    of the tanker. What is it?"), sentences after it only say why it is asked, or thank, and go ("What's the gate
    code? I'm down there first tomorrow.")."""
    text = " ".join(question.split())
    sentences = _SENTENCES.split(text)
    asking = [i for i, sentence in enumerate(sentences) if sentence.endswith("?")]
    end = asking[-1] + 1 if asking else len(sentences)
    while end > 1 and _THANKS.match(sentences[end - 1]):
        end -= 1
    last = sentences[end - 1]
    direct = _direct(last)
    if end == len(sentences) and direct == last:
        return question
    return " ".join([*sentences[:end - 1], direct])


def _direct(sentence: str) -> str:
    """One sentence's question, out of the request around it."""
    text = sentence
    greeted = _GREETED.match(text)
    if greeted is not None and greeted.end() > 0:  # "Hi, quick question: what time …" asks "what time …"
        text = text[greeted.end():]
        text = f"{text[:1].upper()}{text[1:]}"
    match = _WRAPPED.match(text)
    if match is None:
        return text
    rest = match.group("rest")
    if _WH.match(rest):
        if (copula := _COPULA_LAST.match(rest)) is not None:
            rest = f"{copula['wh']} {copula['be']} {copula['np']}"
        return _asked(rest)
    if (whether := _IF.match(rest)) is not None:
        clause = whether.group("clause")
        aux = _AUXILIARY.search(clause)
        # "if the hall is free" → "is the hall free"; "if we need a permit" → "do we need a permit"
        if aux is not None and aux.start() > 0 and len(clause[:aux.start()].split()) <= 6:
            return _asked(f"{aux.group()} {clause[:aux.start()].strip()} {clause[aux.end():].strip()}")
        return _asked(f"do {clause}")
    if _THING.match(rest):
        return _asked(f"what is {rest}")
    return text


def _asked(clause: str) -> str:
    clause = clause.strip().rstrip("?.! ")
    return f"{clause[:1].upper()}{clause[1:]}?"


_WORD = re.compile(r"[^\W\d_][\w'’\-]*")
# A prose sentence ends as one; a heading, a table row or a "Key: value" line does not.
_PROSE_END = re.compile(r"[.!?][\"”’')\]]*\s*$")
# The next word capitalised: a name's first word ("Ulrich Walter").
_NAME_NEXT = re.compile(r" [^\W\d_a-z]")
# A word a sentence, a line, a cell or a list item opens with is capitalised whatever it is: not counted.
_OPENING = re.compile(r"(?:^|[.!?:;|#*>\n•]|\s-)\s*$")


def cased_like(question: str, texts: Iterable[str]) -> str:
    """A question typed in lower case, its words written as `texts` write them inside a sentence when they capitalise
    them more often than not ("who runs the monday class" → "who runs the Monday class"). A question with any capital
    is returned as it is: its writer used capitals, and "What is the fax number?" names nothing."""
    if not question.islower():
        return question
    asked = {w.lower() for w in _WORD.findall(question)} - STOP_WORDS
    if not asked:
        return question
    forms: dict[str, Counter[str]] = {}
    for text in texts:
        if not _PROSE_END.search(text):  # a heading, a table row, a "Key: value" line capitalise for their form
            continue
        for m in _WORD.finditer(text):
            low = m.group().lower()
            # a sentence's first word counts when it opens a run of names ("Ulrich Walter (born …")
            if low in asked and (not _OPENING.search(text[max(0, m.start() - 3):m.start()])
                                 or _NAME_NEXT.match(text, m.end())):
                forms.setdefault(low, Counter())[m.group()] += 1
    written = {low: top for low, form in forms.items()
               if not (top := form.most_common(1)[0][0]).islower() and form[top] > form[low]}
    return _WORD.sub(lambda m: _cased(m.group(), written), question)


def _cased(word: str, written: dict[str, str]) -> str:
    form = written.get(word.lower())
    return form if form is not None and word.islower() else word
