"""The question's anchors: the days and the codes it names ("the Tuesday 14 May 2024 session", "firmware v2.3.1",
"the KMC X11-EL chain", "the 1967 Pan American Games").

Words say what a unit is about only roughly ("Weekend workshop lead: Tomasz" shares "lead" and "workshop" with "Who
leads the 14 May session?"); a day or a code names one thing. A unit that writes the question's anchors, in any
format ("Tue 14 May", "14/05/2024", "2024-05-14"; "v2.3.1" and "2.3.1"), is about the thing the question asks of.
"""

from __future__ import annotations

import re

from ..document.recency import MONTH_NAME, MONTH_NUMBER

# The year after a day is part of it ("14 May 2024"), not an anchor of its own: every note of 2024 writes 2024.
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+({MONTH_NAME})(?![a-z])(?:,?\s+\d{{4}}\b)?",
                        re.IGNORECASE)
_MONTH_DAY = re.compile(rf"\b({MONTH_NAME})\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?!:)(?:,?\s+\d{{4}}\b)?", re.IGNORECASE)
_ISO = re.compile(r"\b\d{4}-(\d{2})-(\d{2})\b")
_NUMERIC = re.compile(r"\b(\d{1,2})[/.](\d{1,2})[/.](?:\d{4}|\d{2})\b")
_YEAR = re.compile(r"1[5-9]\d\d|20\d\d")
# The year of a full date: "31 December 2023", "December 31, 2023", "2023-12-31", "31/12/2023".
_DATED_YEAR = re.compile(rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{MONTH_NAME})|(?:{MONTH_NAME})\s+\d{{1,2}}"
                         rf"(?:st|nd|rd|th)?,?)\s+(\d{{4}})\b|\b(\d{{4}})-\d{{2}}-\d{{2}}\b|\b\d{{1,2}}[/.]\d{{1,2}}[/.](\d{{4}})\b",
                         re.IGNORECASE)
# A token with a digit in it: a code, a model, a version, a year or a count ("X11-EL", "v2.3.1", "1967", "10,000").
_TOKEN = re.compile(r"[A-Za-z0-9][\w.,\-]*\d[\w.\-]*|\d[\w.\-]*")


def _days(text: str) -> set[str]:
    found: set[tuple[int, int]] = set()
    for m in _DAY_MONTH.finditer(text):
        found.add((int(m.group(1)), MONTH_NUMBER[m.group(2)[:3].lower()]))
    for m in _MONTH_DAY.finditer(text):
        found.add((int(m.group(2)), MONTH_NUMBER[m.group(1)[:3].lower()]))
    for m in _ISO.finditer(text):
        found.add((int(m.group(2)), int(m.group(1))))
    for m in _NUMERIC.finditer(text):
        a, b = int(m.group(1)), int(m.group(2))
        found.add((a, b) if b <= 12 else (b, a))  # day first unless that cannot be
    return {f"{day}/{month}" for day, month in found if 1 <= day <= 31 and 1 <= month <= 12}


def _codes(text: str) -> set[str]:
    """Tokens with a digit, written the same way: lower case, no separators, no "v" before a version number."""
    out = set()
    for m in _TOKEN.finditer(text):
        token = m.group().rstrip(".,-").lower()
        token = token[1:] if re.fullmatch(r"v\d[\d.]*", token) else token
        if key := re.sub(r"[.,\-]", "", token):
            out.add(key)
    return out


def _without_days(text: str) -> str:
    for pattern in (_DAY_MONTH, _MONTH_DAY, _ISO, _NUMERIC):  # a day's own digits are no code of their own
        text = pattern.sub(" ", text)
    return text


def anchors(text: str) -> frozenset[str]:
    """The days ("14/5") and codes ("x11el", "231", "1967") a text names."""
    return frozenset(_days(text) | _codes(_without_days(text)))


def _written(asked: frozenset[str], unit: str) -> frozenset[str]:
    """The anchors a unit writes, with the year of each full date it writes when the question names a year alone."""
    written = anchors(unit)
    if any(_YEAR.fullmatch(a) for a in asked):
        written |= {next(g for g in m.groups() if g) for m in _DATED_YEAR.finditer(unit)}
    return written


def anchored(asked: frozenset[str], unit: str) -> float:
    """The share of the question's anchors the unit writes (0 when the question names none). A year the question
    names alone ("at the end of 2023") is written by a full date of that year too ("31 December 2023")."""
    if not asked:
        return 0.0
    return len(asked & _written(asked, unit)) / len(asked)


# A number or an ordinal alone ("4th Baronet", "the 2nd largest") counts or ranks; as a code it names nothing.
ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)?")
_LEADING_NUMBER = re.compile(r"\d+")


def identifying_codes(question: str) -> frozenset[str]:
    """The codes a question names that single out what it asks about: "the Model 1840 musket", "the 26-episode
    series", "the 2003-2004 season", "firmware v2.3.1". Not its days (a question may name one to ask what came
    after it) and not its ordinals."""
    return frozenset(c for c in _codes(_without_days(question)) if c.isdigit() or not ORDINAL.fullmatch(c))


def writes_code(codes: frozenset[str], text: str) -> bool:
    """Whether a text writes one of the codes, a quantity's number being enough ("26 episodes" for "26-episode")."""
    written = _written(codes, text)
    return any(c in written or ((m := _LEADING_NUMBER.match(c)) is not None and m.group() in written)
               for c in codes)
