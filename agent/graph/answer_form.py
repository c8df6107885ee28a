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
    re.compile(r"^(?:which|who|what)\b[^,]*,\s*([^,?]+?)\s+or\s+([^,?]+?)\s*,", re.IGNORECASE),
    re.compile(r"^(?:in\s+)?between\s+([^,?]+?)\s+and\s+([^,?]+?)\s*,?\s+(?:which|who)\b", re.IGNORECASE),
)
_MAX_OPTION_CHARS = 80


def answer_choices(question: str) -> list[str] | None:
    """The answers the question allows besides "not found", or None when it does not say."""
    text = " ".join(question.split())
    words = text.split(" ")
    if words and words[0].lower() in _AUXILIARIES and " or " not in text.lower():
        return list(YES_NO)
    for pattern in _ALTERNATIVES:
        match = pattern.search(text)
        if match is None:
            continue
        options = [_strip_article(o) for o in match.groups()]
        if all(0 < len(o) <= _MAX_OPTION_CHARS for o in options) and options[0].lower() != options[1].lower():
            return options
        return None
    return None


def _strip_article(option: str) -> str:
    """"the Leonberger" → "Leonberger": answers are scored without articles, and shorter is safer."""
    return re.sub(r"^(the|a|an)\s+", "", option.strip(), flags=re.IGNORECASE)
