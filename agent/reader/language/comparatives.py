"""Comparative words: what tells a question's two alternatives apart, and for a measure, which way and along what.

`MEASURES`: a comparative, whether the smaller value wins, and the dimension it compares when the question names no
column ("heavier" → weight); answers/comparison.py compares table rows by them. `COMPARATIVE_WORDS` adds the ones
that order or rank without a number to compare ("older", "better"): answer_form.py reads "Is the red kettle or the
blue kettle heavier?" as a choice because one of them is there.
"""

from __future__ import annotations

MEASURES: dict[str, tuple[bool, str]] = {
    "heavier": (False, "weight"), "lighter": (True, "weight"), "longer": (False, "length"),
    "shorter": (True, "length"), "taller": (False, "height"), "higher": (False, "height"), "lower": (True, "height"),
    "wider": (False, "width"), "narrower": (True, "width"), "bigger": (False, "size"), "larger": (False, "size"),
    "smaller": (True, "size"), "cheaper": (True, "price"), "dearer": (False, "price"), "costlier": (False, "cost"),
    "faster": (False, "speed"), "slower": (True, "speed"), "more": (False, ""), "less": (True, ""),
    "fewer": (True, ""), "greater": (False, ""),
}
COMPARATIVE_WORDS = frozenset(MEASURES) | {"older", "newer", "younger", "better", "worse"}
