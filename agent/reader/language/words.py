"""The words of questions and sentences as the rules compare them: content words, crude stems, and the
words that make a date a birth or a death."""

from __future__ import annotations

from .spans import STOP_WORDS, WORD


def content_words(text: str) -> list[str]:
    return [w for w in (m.group().lower() for m in WORD.finditer(text)) if w not in STOP_WORDS and len(w) > 1]


_SUFFIXES = ("ing", "ed", "es", "s")


def stem(word: str) -> str:
    """A crude stem, enough to match "died" with "die" and "founded" with "founder": drop one common
    suffix, keep at most 5 letters."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    else:
        if word.endswith("ed"):  # "died" → "die"
            word = word[:-1]
    return word[:5]


BIRTH = frozenset({"born", "birth", "b"})
DEATH = frozenset({"die", "death", "dead", "kill", "d"})


def life_date(sentence: str, start: int) -> frozenset[str]:
    """Whether a date is a birth or a death: "born 1640", "died on 16 April 1689", or in
    "Name (1640 – 16 April 1689)" before or after the dash. Empty when it says neither."""
    before = [stem(w.lower()) for w in WORD.findall(sentence[max(0, start - 25):start])][-3:]
    if BIRTH & set(before):
        return BIRTH
    if DEATH & set(before):
        return DEATH
    depth, opened = 0, -1
    for i in range(start - 1, -1, -1):  # the innermost "(" still open at `start` (skipping closed pairs)
        if sentence[i] == ")":
            depth += 1
        elif sentence[i] == "(":
            if depth == 0:
                opened = i
                break
            depth -= 1
    if opened < 0:
        return frozenset()
    closed = sentence.find(")", start)
    inside = sentence[opened:closed if closed > 0 else len(sentence)]
    dash = max(inside.rfind("–"), inside.rfind("—"), inside.rfind(" - "))
    if dash < 0:
        return frozenset()
    return DEATH if start > opened + dash else BIRTH
