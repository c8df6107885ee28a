"""The answer's form, read from the question, so the writer's grammar can enforce it.

A question that opens with an auxiliary verb and offers no alternatives ("Were A and B both
directors?") is answered yes or no; one that ends by naming its alternatives ("Which is older, A or
B?") is answered with one of them. Either may also be answered "not found". A small model asked
such a question otherwise tends to write a sentence about it, which is neither an answer nor
scoreable; the grammar makes the form a constraint instead of a hope. Any other question: no
constraint (None).
"""

from __future__ import annotations

import re

from .comparatives import COMPARATIVE_WORDS
from .phrasing import direct_question
from .spans import NAME_CONNECTORS

NOT_FOUND = "not found"
YES_NO = ["yes", "no"]
_AUXILIARIES = frozenset({
    "is", "are", "was", "were", "do", "does", "did", "can", "could", "has", "have", "had", "will", "would",
    "should", "am",
})
# Where a question names its alternatives (neither may contain a comma): ", A or B?" (or ": A or B")
# at the end, "Which director, A or B, was …", and "Between A and B, which …".
_ALTERNATIVES = (
    re.compile(r"[,:]\s*([^,:?]+?),?\s+or\s+([^,:?]+?)\s*\??\s*$"),
    re.compile(r"^(?:which|who|what)\b[^,]*,\s*([^,?]+?),?\s+or\s+([^,?]+?)\s*,", re.IGNORECASE),
    re.compile(r"^(?:in\s+)?(?:between|of|among|amongst)\s+([^,?]+?)\s+and\s+([^,?]+?)\s*,?\s+(?:which|who)\b",
               re.IGNORECASE),
)
# "Is the deposit bigger for the hedge trimmer or the rotavator?", "Is the red kettle or the blue kettle heavier?": the
# alternatives end a yes/no-shaped question, each led by its article, and a comparative says what tells them apart.
_ARTICLE_PAIR = re.compile(r"^(?:is|are|was|were|do|does|did)\b.*\b(?:the|a|an)\s+((?:(?!\b(?:the|a|an)\b)[^,?])+?)"
                           r"\s+or\s+(?:the|a|an)\s+((?:(?!\b(?:the|a|an)\b)[^,?])+?)\s*\?\s*$", re.IGNORECASE)
_COMPARATIVE = re.compile(rf"\b(?:{'|'.join(sorted(COMPARATIVE_WORDS))})\b", re.IGNORECASE)
_TRAILING_COMPARATIVE = re.compile(rf"\s+(?:{'|'.join(sorted(COMPARATIVE_WORDS))})$", re.IGNORECASE)
# "Which genus has more species, Bactris and Epigaea?": two names after the comma, joined by "and" (not a property
# both share: "Which continent are both magazines, Sayidaty and Closer published?").
_NAMED_PAIR = re.compile(r"^(?:which|who)\b(?![^,:]*\bboth\b)[^,:]*[,:]\s*([^,:?]+?)\s+and\s+([^,:?]+?)\s*\??\s*$",
                         re.IGNORECASE)
_MAX_OPTION_CHARS = 80
# A yes/no question after a clause that sets it up: "If I borrow the kettle, will it run on 120 V?", "Now that the
# date has moved, is the fee still $8?"
_LEAD_CLAUSE = re.compile(r"^(?:if|now that|since|given that|assuming|once|after|before|when|as|in|on|at|for)\b"
                          r"[^,?]*,\s*(?:" + "|".join(sorted(_AUXILIARIES)) + r")\b", re.IGNORECASE)
# An option's own words end where a clause about it begins: "the Mosaic we've got in the freezer" is the Mosaic.
_OPTION_CLAUSE = re.compile(r"\s+(?:that|which|who|we|i|you|they|we['’]ve|i['’]ve|you['’]ve|they['’]ve|we['’]re)\s.*$",
                            re.IGNORECASE)
# Where nothing marks where the alternatives begin ("Who is older Carrie Akre or Shifty Shellshock?",
# "Was Pepper Keenan or Rob Parissi born first?"), each is the run of capitalised words (or numbers)
# next to the "or": titles and names keep their small words ("The Memory of Justice").
_OPENERS = frozenset({"which", "who", "whom", "whose", "what"}) | _AUXILIARIES
_SMALL_WORDS = NAME_CONNECTORS | {"and"}


def answer_choices(question: str) -> list[str] | None:
    """The answers the question allows besides "not found", or None when it does not say."""
    question = direct_question(question)
    text = " ".join(question.split())
    words = text.split(" ")
    asking = asking_sentence(text).split(" ")
    if " or " not in text.lower() and (asking[0].lower() in _AUXILIARIES or _LEAD_CLAUSE.match(text)):
        return list(YES_NO)
    for pattern in _ALTERNATIVES:
        match = pattern.search(text)
        if match is None:
            continue
        options = [_unquote(_named_part(_strip_article(_OPTION_CLAUSE.sub("", o)))) for o in match.groups()]
        if all(0 < len(o) <= _MAX_OPTION_CHARS for o in options) and options[0].lower() != options[1].lower():
            return options
        return None
    if (pair := _ARTICLE_PAIR.search(text)) is not None:
        first, second = pair.groups()
        if (trailing := _TRAILING_COMPARATIVE.search(second)) is not None:  # "… or the blue kettle heavier?"
            second = second[:trailing.start()]
            compared = len(second.split()) <= 2  # "the hedge trimmer bought first" is no option and its comparative
        else:
            compared = _COMPARATIVE.search(text[:pair.start(1)]) is not None
        return [first, second] if compared and first.lower() != second.lower() else None
    if (pair := _NAMED_PAIR.search(text)) is not None:
        options = [_strip_article(o) for o in pair.groups()]
        names = [_name_run(o.split(), backward=False) for o in options]
        if all(name == o.split() for name, o in zip(names, options, strict=True)) and options[0] != options[1]:
            return options
        return None
    return _bare_alternatives(words)


# A clause that sets a question up, before the words that ask: "When I'm instructing a group of under-12s, what's the
# largest number …", "Under the prices that came in this June, what does an adult pay …". What is asked for is read
# from the rest (not "when" → a date); the setting stays part of what the question is about.
_SETTING = re.compile(r"^(?:if|now that|since|given that|assuming|once|after|before|when|whenever|while|as|in|on|at|"
                      r"for|under|during|with|counting)\b(?!\s+(?:" + "|".join(sorted(_AUXILIARIES)) + r")\b)[^,?]*,\s*"
                      r"(?=(?:what|which|who|whom|whose|where|when|how|why|" + "|".join(sorted(_AUXILIARIES)) + r")\b)",
                      re.IGNORECASE)
# Sentences that tell before the one that asks: "My son is 17. Is he allowed to climb on his own?"
_TOLD = re.compile(r"^[^?]*?[.!]\s+(?=[A-Z])")


def without_setting(question: str) -> str:
    """The question without a clause that sets it up: "When we implant a microchip, which registry …?" → "which
    registry …?"."""
    return _SETTING.sub("", " ".join(question.split()), count=1)


def asking_sentence(question: str) -> str:
    """The sentence that asks, after any that only tell ("My dog weighs 31 kg. What will it cost?" → "What will it
    cost?"), without its setting clause."""
    text = " ".join(question.split())
    while (m := _TOLD.match(text)) is not None and "?" in text[m.end():]:
        text = text[m.end():]
    return without_setting(text)


def main_clause(question: str) -> str:
    """A yes/no question without the clause that sets it up: "Now that the date has moved, is the fee still $8?" →
    "is the fee still $8?"."""
    text = " ".join(question.split())
    return text.split(",", 1)[1].strip() if _LEAD_CLAUSE.match(text) else text


def _bare_alternatives(words: list[str]) -> list[str] | None:
    """"A or B" where no comma marks the alternatives: the capitalised runs either side of the one "or"."""
    lowered = [w.lower() for w in words]
    if not words or lowered[0] not in _OPENERS or lowered.count("or") != 1:
        return None
    at = lowered.index("or")
    before = _name_run(list(reversed(words[1:at])), backward=True)
    after = _name_run(words[at + 1:], backward=False)
    if not before or not after:
        return None
    options = [_strip_article(" ".join(reversed(before))), _strip_article(" ".join(after))]
    if options[0].lower() == options[1].lower() or any(len(o) > _MAX_OPTION_CHARS for o in options):
        return None
    return options


def _name_run(words: list[str], backward: bool) -> list[str]:
    """The leading words that can belong to a name, without small words at either end; a comma or a
    question mark ends the name (walking backward, a comma ends the clause before it)."""
    run: list[str] = []
    for word in words:
        bare = word.strip("?,\"'‘’“”")
        if backward and word.endswith(","):
            break
        if not bare or not (bare[0].isupper() or bare[0].isdigit() or bare.lower() in _SMALL_WORDS):
            break
        run.append(bare)
        if word.endswith(("?", ",")):
            break
    while run and run[-1].lower() in _SMALL_WORDS:
        run.pop()
    while run and run[0].lower() in _SMALL_WORDS:
        run.pop(0)
    return run


def _named_part(option: str) -> str:
    """"retired tennis players Ross Case" → "Ross Case": an option a description introduces is the name after it;
    an option with no name ("hedge trimmer") or that opens with one stays whole."""
    words = option.split()
    for i, word in enumerate(words):
        if not word.islower():  # a capital or a digit: where the name begins
            return " ".join(words[i:]) if i and all(w.isalpha() for w in words[:i]) else option
    return option


def _strip_article(option: str) -> str:
    """"the Leonberger" → "Leonberger": answers are scored without articles, and shorter is safer."""
    return re.sub(r"^(the|a|an)\s+", "", option.strip(), flags=re.IGNORECASE)


def _unquote(option: str) -> str:
    """"'Mean Girls'" → "Mean Girls": a title without the quotes it stands in."""
    return option[1:-1] if len(option) > 2 and option[0] in "'\"‘“" and option[-1] in "'\"’”" else option
