"""A yes/no question about one thing, read from the unit of evidence that states it.

"Is there mains power on the star-party field?" — "There is no mains power on the field." A small model asked to
choose between "yes" and "no" picks "yes" whatever the evidence says; the unit that covers the question says it
plainly or negates it. So the unit that covers most of the question's main clause (past a clause that sets it up;
relevance.py), at least `MIN_COVERAGE` of its weight, a later or correcting unit first among equals (recency.py),
decides: "no" when a negation stands in it ("not", "no", "never", "n't", "no longer", "banned"), "yes" otherwise.
A question comparing two things ("Are A and B both …", "the same …") is shared_property.py's; a question no unit
covers well enough stays undecided, for the model to choose. Pool train: none of its 63 yes/no questions is decided
here (all compare two things or no unit covers them), so the rule is for questions about one's own things.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..document.evidence import EvidenceSentence
from ..document.recency import corrects, written_on
from ..language.answer_form import main_clause
from ..trust.relevance import coverage, question_words, unit_stems
from .comparison import OptionChoice

# Share of the question's weight the deciding unit must cover: well above the quarter that makes a unit "about" it,
# since the unit's polarity is taken for the question's answer.
MIN_COVERAGE = 0.6
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nothing|nobody|nowhere|neither|nor|cannot|without|banned|forbidden|prohibited|"
    r"no longer)\b|n['’]t\b", re.IGNORECASE)
# Two things compared, or a question that is not about one thing's state.
_COMPARES = re.compile(r"\b(?:both|same|either|neither|also|than|as well as)\b", re.IGNORECASE)


def decide_polarity(question: str, sentences: Iterable[EvidenceSentence]) -> OptionChoice | None:
    """"yes" or "no" from the unit that covers the question best, or None when none covers enough of it."""
    if _COMPARES.search(question) or _NEGATION.search(question):  # "Is it not …?": a unit's "not" says little
        return None
    units = list(sentences)
    words = question_words(main_clause(question), units)
    best: tuple[float, bool, tuple[int, int, int], int] | None = None
    chosen: EvidenceSentence | None = None
    for i, unit in enumerate(units):
        score = coverage(words, unit_stems(unit)).score
        if score < MIN_COVERAGE:
            continue
        key = (round(score, 2), corrects(unit.text), written_on(unit) or (0, 0, 0), -i)
        if best is None or key > best:
            best, chosen = key, unit
    if chosen is None:
        return None
    answer = "no" if _NEGATION.search(chosen.text) else "yes"
    return OptionChoice(answer, chosen.text, chosen.url, "polarity")
