"""The reader's crude stems: the forms of one word meet, and unrelated words stay apart."""

from __future__ import annotations

import pytest
from deepresearch.agent.reader.language.words import stem


@pytest.mark.parametrize("forms", [
    ("note", "notes"),  # "notes" was "not": its -es read as a suffix
    ("price", "prices"),
    ("large", "largest"),
    ("rule", "rules"),
    ("store", "stores"),
    ("box", "boxes"),
    ("church", "churches"),
    ("die", "died", "dies"),
    ("founded", "founder", "founding"),
    ("buy", "bought"),
])
def test_the_forms_of_a_word_meet(forms):
    assert len({stem(w) for w in forms}) == 1, {w: stem(w) for w in forms}


def test_different_words_stay_apart():
    assert len({stem(w) for w in ("note", "nothing", "rule", "roll", "price", "prize", "store", "story")}) == 8
