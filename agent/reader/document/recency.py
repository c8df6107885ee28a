"""When a unit was written, and whether it corrects an earlier one: so that a later note wins over a stale one.

A person's notes change their facts: the fee agreed in March is replaced in May, a log line corrects the pressure a
handbook gives, a firmware update lowers a threshold. A unit's date is the date of its record, not a date it talks
about: the stamp a log line or a table row opens with, else the date in its heading ("Members' meeting 2 May 2024"),
else a full date in its source's title or address ("2024-05-02_members-meeting.md", "updated 24/09/2024"). Bare
years are not dates here (a Wikipedia title such as "2010 FIFA World Cup" dates nothing it says).
"""

from __future__ import annotations

import re

from .evidence import EvidenceSentence

# A month's number by its name's first three letters, and a month name as a pattern (anchors.py reads them too).
MONTH_NUMBER = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)}
MONTH_NAME = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_NUMERIC = re.compile(r"\b(\d{1,2})[/.](\d{1,2})[/.](\d{4})\b")
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({MONTH_NAME})\s+(\d{{4}})\b", re.IGNORECASE)
_MONTH_DAY = re.compile(rf"\b({MONTH_NAME})\s+(\d{{1,2}}),?\s+(\d{{4}})\b", re.IGNORECASE)
_MONTH_YEAR = re.compile(r"\b(\d{1,2})/(\d{4})\b")
# Words with which a note says it replaces what was said before.
CORRECTS = re.compile(r"\b(correction|corrected|corrects|instead of|no longer|not \d[\d.,]*\s*\w*"
                      r"|from now on|now (?:is|are|closes|opens|set)|changed to|updated to|lowered to|raised to|"
                      r"moved to|superseded|revised|new dates?|current value|is therefore)\b", re.IGNORECASE)

Date = tuple[int, int, int]


def first_date(text: str, *, month_year: bool = False) -> Date | None:
    """The first full date written in `text` as (year, month, day); `month_year`: "03/2024" counts (day 1)."""
    found: list[tuple[int, Date]] = []
    if m := _ISO.search(text):
        found.append((m.start(), (int(m.group(1)), int(m.group(2)), int(m.group(3)))))
    if m := _NUMERIC.search(text):
        a, b, year = int(m.group(1)), int(m.group(2)), int(m.group(3))
        day, month = (a, b) if b <= 12 else (b, a)  # day first unless that cannot be
        found.append((m.start(), (year, month, day)))
    if m := _DAY_MONTH.search(text):
        found.append((m.start(), (int(m.group(3)), MONTH_NUMBER[m.group(2)[:3].lower()], int(m.group(1)))))
    if m := _MONTH_DAY.search(text):
        found.append((m.start(), (int(m.group(3)), MONTH_NUMBER[m.group(1)[:3].lower()], int(m.group(2)))))
    if month_year and (m := _MONTH_YEAR.search(text)):
        found.append((m.start(), (int(m.group(2)), int(m.group(1)), 1)))
    valid = [(pos, d) for pos, d in found if 1 <= d[1] <= 12 and 1 <= d[2] <= 31]
    return min(valid)[1] if valid else None


def written_on(sent: EvidenceSentence) -> Date | None:
    """When the unit was written: its own stamp, its heading's date, or its source's."""
    opening = sent.text.lstrip("|- *")[:24]
    return (first_date(opening) or first_date(sent.heading) or first_date(sent.title, month_year=True)
            or first_date(sent.url.replace("_", " ").replace("/", " ")))


_STAMP = re.compile(r"^\W{0,2}(?:\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4}|\d{1,2}\.\d{1,2}\.\d{4})\b")


def is_stamped(text: str) -> bool:
    """The unit opens with its date, as a log line or a dated table row does."""
    return _STAMP.match(text) is not None


def corrects(text: str) -> bool:
    return CORRECTS.search(text) is not None


def corrected_from(text: str) -> int | None:
    """Where a correcting unit states what is right now (None: it corrects nothing): after its cue, or after the
    colon that ends the cue's reference ("CORRECTION to the minutes of 21 March 2024, item 5: the rate is £27" —
    not "21 March 2024"); from the start when the cue is "not <value>" ("8 bar, not 6.5 bar")."""
    m = CORRECTS.search(text)
    if m is None:
        return None
    if m.group(1).lower().startswith("not "):
        return 0
    colon = text.find(":", m.end(), m.end() + 80)
    return colon + 1 if colon >= 0 else m.end()


_STALE_BEFORE = re.compile(r"\b(not|instead of|no longer|rather than|formerly|previously|was|from|old|former)\s+"
                           r"(?:\w+\s+){0,3}$", re.IGNORECASE)
# "… 40 % -> 25 %", "the old 4721 no longer works", "6.5 bar is wrong", "serial as 1B3-051474 - WRONG"
_STALE_AFTER = re.compile(r"^\s*(?:->|→|=>|⟶|no longer\b|(?:is|was) (?:no longer|wrong|incorrect|out of date|"
                          r"replaced|superseded|withdrawn)\b|[-–—:(]\s*(?:wrong|incorrect|a typo|typo|mistake)\b)",
                          re.IGNORECASE)
_RIGHT_AFTER = re.compile(r"^,?\s+(?:and\s+)?not\s+\S*\d", re.IGNORECASE)


def stale_value(unit: str, start: int, end: int, correcting: bool) -> bool:
    """The span is the value a change replaced: "max is 8 bar, not 6.5 bar", "threshold 40 % -> 25 %", "the fee
    was €25" in a unit that says it corrects ("from" and "was" count only there: "from 1990" dates a start)."""
    before = unit[max(0, start - 24):start]
    if _STALE_AFTER.match(unit[end:end + 24]):
        return True
    if _RIGHT_AFTER.match(unit[end:end + 12]):  # "OG was 1.052, not 1.062": the value before "not" is the right one
        return False
    m = _STALE_BEFORE.search(before)
    return m is not None and (m.group(1).lower() not in ("was", "from") or correcting)
