"""The words of questions and sentences as the rules compare them: content words, crude stems, and the
words that make a date a birth or a death."""

from __future__ import annotations

from .spans import STOP_WORDS, WORD

# The particle of a hyphenated compound ("roll-off", "sign-up", "print-out") says nothing of its own: "roll-off roof"
# is no question about turning something "off".
_PARTICLES = frozenset({"off", "up", "out", "down", "over", "back", "away"})


def content_words(text: str) -> list[str]:
    return [w for m in WORD.finditer(text) if (w := m.group().lower()) not in STOP_WORDS and len(w) > 1
            and not (w in _PARTICLES and m.start() > 0 and text[m.start() - 1] == "-")]


_SUFFIXES = ("ing", "ed", "es", "s")
_SIBILANT_ES = ("ses", "xes", "zes", "ches", "shes")
# Irregular past forms, so "who found out" meets "PN found", "bought" meets "buy": the common verbs whose past is
# no suffix of their present (forms that are also nouns or names, "saw", "left", "led", "met", "spoke", "fell", "sat",
# are left alone).
_IRREGULAR = {
    past: verb for verb, forms in {
        "find": "found", "buy": "bought", "pay": "paid", "bring": "brought", "take": "took taken", "give": "gave given",
        "go": "went gone", "make": "made", "win": "won", "hold": "held", "sell": "sold", "tell": "told",
        "write": "wrote written", "begin": "began begun", "choose": "chose chosen", "break": "broke broken",
        "spend": "spent", "send": "sent", "build": "built", "keep": "kept", "think": "thought",
        "teach": "taught", "catch": "caught", "fight": "fought", "sing": "sang sung", "drive": "drove driven",
        "ride": "rode ridden", "grow": "grew grown", "know": "knew known", "throw": "threw thrown",
        "fly": "flew flown", "eat": "ate eaten", "fall": "fallen", "forget": "forgot forgotten",
        "stand": "stood", "become": "became", "come": "came", "run": "ran", "lose": "lost",
        "speak": "spoken", "steal": "stole stolen", "swim": "swam swum", "wear": "wore worn",
    }.items() for past in forms.split()
}


def stem(word: str) -> str:
    """A crude stem, enough to match "died" with "die", "founded" with "founder" and "prices" with "price": an
    irregular past read as its verb ("bought" → buy), else drop one common suffix ("-es" only after a hiss: "boxes",
    not "notes"); keep at most 5 letters. (A final "e" stays: dropped, "large" would miss "largest", cut to "large".)"""
    word = _IRREGULAR.get(word, word)
    for suffix in _SUFFIXES:
        if suffix == "es" and not word.endswith(_SIBILANT_ES):
            continue
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
