"""Candidate answer spans of a sentence: names (capitalised runs, quoted titles, a name with its qualifier),
dates, eras and numbers, and whole lists of them.

Rules only (stdlib): a span is a place where an answer could be; candidates.py decides which one is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

AnswerKind = Literal["date", "time", "number", "name", "code", "place", "category"]

_MONTHS = ("January|February|March|April|May|June|July|August|September|October|November|December|"
           "Jan\\.?|Feb\\.?|Mar\\.?|Apr\\.?|Jun\\.?|Jul\\.?|Aug\\.?|Sep\\.?|Sept\\.?|Oct\\.?|Nov\\.?|Dec\\.?")
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_WEEKDAY = r"(?:Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun)(?:day|sday|nesday|rsday|urday)?\.?"
_DATE_PATTERNS = [
    re.compile(rf"\b{_DAY}\s*[–-]\s*{_DAY}\s+(?:{_MONTHS})\s+\d{{4}}\b"),  # 1–3 November 2024
    # a stretch of days, as a letter writes it: "Monday 19th to Friday 23rd August"
    re.compile(rf"\b(?:{_WEEKDAY},?\s+)?{_DAY}\s+(?:to|until|till)\s+(?:{_WEEKDAY},?\s+)?{_DAY}\s+(?:{_MONTHS})"
               rf"(?:\s+\d{{4}})?\b"),
    re.compile(rf"\b{_DAY}\s+(?:{_MONTHS})\s+\d{{3,4}}\b"),  # 16 April 1689, 8th October 2024
    re.compile(rf"\b(?:{_MONTHS})\s+\d{{1,2}},?\s+\d{{3,4}}\b"),  # April 16, 1689
    re.compile(rf"\b(?:{_MONTHS})\s+\d{{3,4}}\b"),  # April 1689
    re.compile(r"\b(?:1[0-9]|20)\d{2}s?\b"),  # 1689, 1960s
    re.compile(r"\b\d{1,4}\s?(?:BC|BCE|AD|CE)\b"),  # 323 BC
    re.compile(r"\b\d{1,2}(?:st|nd|rd|th)[\s-]+(?:-\s+)?century\b"),  # 19th century, "16th - century"
    re.compile(r"\b\d{4}-\d{2}-\d{2}\b"),  # 2024-04-02
    re.compile(r"\b\d{1,2}/\d{1,2}/\d{4}\b"),  # 30/08/2024 (or 08/30/2024)
    re.compile(r"(?<![\d/])\d{1,2}/\d{1,2}/\d{2}\b(?!/)"),  # 01/06/24, as a diary writes it
    re.compile(r"\b\d{1,2}\.\d{1,2}\.\d{4}\b"),  # 30.08.2024
]
# A day of a month without its year ("on 30 Aug", "Sat 14 Sept", "August 30th"): no date answer of its own, but its
# number is no count or measure either.
_DAY_MONTH = re.compile(rf"\b{_DAY}\s+(?:{_MONTHS})(?![\w])|\b(?:{_MONTHS})\s+{_DAY}\b")
# A day of a month with its weekday as a diary or log writes it ("Mon 14 Oct", "Thursday 2 May"): a line's stamp, no
# part of the name that follows it ("Mon 14 Oct Calder Heating started").
_STAMP = re.compile(rf"(?:\b{_WEEKDAY},?\s+)?(?:{_DAY_MONTH.pattern})")
# A date without its year as a letter home or a rota writes it ("Friday 19 July", "Tue 13/02", "on 30 Aug"): an
# answer of its own where nothing fuller is written (a date inside a fuller one is not taken apart: _date_spans).
_YEARLESS = re.compile(rf"{_STAMP.pattern}|\b{_WEEKDAY},?\s+\d{{1,2}}/\d{{1,2}}\b(?!/)")
# A time of day: "13:10", "7:00 pm", "22:52", "3 a.m.", "3.30am", "9 o'clock".
_CLOCK = re.compile(r"(?<![\d:.])\d{1,2}(?::\d{2}(?::\d{2})?(?:\s?[ap]\.?m\b\.?)?(?![\d:])|\s?[ap]\.?m\b\.?"
                    r"|\.\d{2}\s?[ap]\.?m\b\.?"  # "3.30am", as British notes write it
                    r"|\s?o['’]clock\b)",
                    re.IGNORECASE)
# Identifiers, codes and part numbers: letters and digits mixed ("GZ7731184K", "D4MC-5020", "CL555R", "v2.3.1",
# "TSC/24/0613"),
# hex ("0x5A"), MAC and IP addresses. A name span may hold one ("KMC CL555R"); this is the code alone.
_CODE = re.compile(r"(?<![\w:.\-/])(?:"
                   # parts joined by slashes, letters and digits among them: "TSC/24/0613", "HOL/B/24-118"
                   r"(?=[\w/\-]*\d)(?=[\w/\-]*[A-Za-z])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*(?:/[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*)+"
                   r"|"
                   r"(?:[0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}"  # 24:6F:28:A1:3C:7E
                   r"|\d{1,3}(?:\.\d{1,3}){3}"  # 192.168.50.21
                   r"|0x[0-9A-Fa-f]+"  # 0x5A
                   r"|(?:\+\d{1,3}[ ]?\d{1,4}|0\d{2,4})(?:[ ]\d{3,4}){1,2}(?![ ]?\d)"  # 07700 900 586, +353 87 123 4567
                   r"|(?:\(\d{3}\)[ ]?|\d{3}[-.])\d{3}[-.]\d{4}"  # (613) 555-0152, 613-555-0199
                   r"|(?=[\w.\-]*\d)(?=[\w.\-]*[A-Za-z])[A-Za-z0-9]+(?:[.\-][A-Za-z0-9]+)*"  # GZ7731184K, D4MC-5020
                   r")(?![\w:\-]|\.\w)")
# A number with its unit or currency: "40 Nm", "0.5 %", "24.5 kg", "17 °C", "2 kVA", "28 days", "€398.60".
_UNITS = (r"%|°C|°F|mm|cm|km|m|kg|mg|g|t|Nm|N·m|N|bar|psi|kPa|Pa|V|mV|A|mA|kW|W|kVA|Wh|kWh|Hz|kHz|MHz|GHz|"
          r"ml|l|L|litres?|liters?|days?|weeks?|months?|hours?|hrs?|h|minutes?|mins?|min|seconds?|s|ms|"
          r"GB|MB|kB|TB|dB|rpm|mph|km/h|kph|px|in|ft|lb|lbs|oz")
# Currencies by symbol or ISO code: "€", "EUR 465".
CURRENCY_CODES = "EUR|GBP|USD|CAD|AUD|CHF"
CURRENCY = re.compile(rf"[€£$¥]|\b(?:{CURRENCY_CODES})\b")
_QUANTITY = re.compile(rf"(?:[€£$¥]\s?)?(?<![\w.])\d+(?:[.,]\d+)*\s?(?:{_UNITS})(?![\w°])"
                       rf"|\b(?:{CURRENCY_CODES})\s?\d+(?:,\d{{3}})*(?:\.\d+)?\b")  # "EUR 465"
# A size given as its dimensions: "1.8 m × 1.2 m", "6 x 3 m".
_DIMENSIONS = re.compile(rf"(?<![\w.])\d+(?:[.,]\d+)?(?:\s?(?:{_UNITS}))?(?:\s*[×x]\s*\d+(?:[.,]\d+)?"
                         rf"(?:\s?(?:{_UNITS}))?)+(?<=[^\d\s])(?![\w°])")
# A comma belongs to a number only between thousands ("1,234"), never after it ("in 2015, the").
_NUMBER = re.compile(
    r"(?:(?:US|A|C)?\$|£|€)?\b\d+(?:,\d{3})*(?:\.\d+)?(?:\s+(?:million|billion|thousand|hundred|trillion))?"
    r"(?:\s+(?:[a-z]+))?"
)
_BARE_NUMBER = re.compile(
    r"(?:(?:US|A|C)?\$|£|€)?\d+(?:,\d{3})*(?:\.\d+)?(?:\s+(?:million|billion|thousand|hundred|trillion))?"
)
# Counts written as words ("won five titles"); "one" is left out: it is mostly "one of the".
_NUMBER_WORD = re.compile(r"\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
                          r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|twice)\b",
                          re.IGNORECASE)
_QUOTED = re.compile(r"[\"“]([^\"“”]{2,80})[\"”]")
_TOKEN = re.compile(r"[\w][\w'’.\-&]*|[^\w\s]", re.UNICODE)
WORD = re.compile(r"\w+", re.UNICODE)
YEAR = re.compile(r"1\d{3}|20\d{2}")  # a year as written: 1000–2099

# Lower-case words allowed inside a name ("Bank of England", "Leonardo da Vinci").
NAME_CONNECTORS = frozenset({"of", "the", "de", "da", "del", "della", "di", "du", "des", "la", "le", "van",
                         "von", "der", "den", "y", "on", "upon", "&", "'s", "’s", "for", "in", "at"})
# Capitalised words that begin sentences but are not names.
_NOT_NAMES = frozenset({
    "The", "A", "An", "In", "On", "At", "He", "She", "It", "They", "This", "That", "These", "Those", "His",
    "Her", "Its", "Their", "There", "After", "Before", "During", "When", "While", "Although", "However", "As",
    "From", "For", "With", "By", "Of", "To", "And", "But", "Or", "Since", "Following", "Born", "Also", "Both",
    "Some", "Many", "Most", "One", "Two", "Three", "Today", "Later", "Then", "We", "I", "You", "Our", "If",
    "According", "Unlike", "Despite", "Like", "Under", "Between", "Among", "Until", "Each", "All",
    "Other", "Another", "Such", "What", "Which", "Who", "Where", "Why", "How", "Is", "Was", "Were", "Are",
})

# Words that open a count ("Over 300 people"), not a name with its model number ("Brewzilla 35").
_QUANTIFIERS = frozenset({"over", "under", "around", "almost", "only", "just", "exactly", "circa", "ca", "total",
                          "up", "above", "below", "more", "less", "fewer", "than", "nearly", "roughly", "some"})

# Names that are almost never an answer on their own: months, weekdays, demonyms of the big countries.
GENERIC_NAMES = frozenset([
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
    "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "american", "british",
    "english", "french", "german", "italian", "spanish", "russian", "chinese", "japanese", "canadian", "australian",
    "irish", "scottish", "welsh", "indian", "swedish", "norwegian", "danish", "dutch", "european", "african",
    "asian", "mexican", "brazilian", "polish", "greek", "roman", "christian", "catholic", "jewish", "muslim"
])

STOP_WORDS = frozenset([
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "and", "or", "but", "is", "was",
    "were", "are", "be", "been", "being", "as", "that", "this", "these", "those", "which", "who", "whom", "whose",
    "what", "when", "where", "why", "how", "did", "do", "does", "done", "has", "have", "had", "it", "its", "he",
    "she", "they", "his", "her", "their", "there", "than", "then", "also", "into", "onto", "about", "after",
    "before", "during", "while", "not", "no", "yes", "name", "named", "known", "called", "both", "same", "one",
    "first", "second", "other", "another", "any", "all", "some", "such", "many", "much", "more", "most", "same",
    "whose", "year", "years"
])


@dataclass(frozen=True)
class Span:
    text: str
    kind: AnswerKind
    start: int  # character offset in its sentence


def name_spans(sentence: str) -> list[Span]:
    """Maximal runs of capitalised words (with lower-case connectors inside) and quoted titles."""
    stamps = [(m.start(), m.end()) for m in _STAMP.finditer(sentence)]
    tokens = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(sentence)
              if not any(a <= m.start() < b for a, b in stamps)]
    spans: list[Span] = []
    i = 0
    while i < len(tokens):
        word = tokens[i][0]
        if not _is_cap(word):
            i += 1
            continue
        j = i + 1
        while j < len(tokens):
            if not _adjacent(sentence, tokens[j - 1], tokens[j]):
                break
            if _is_cap(tokens[j][0]) or _model_number(tokens, j):
                j += 1
            elif after := _past_connectors(tokens, j):
                j = after
            else:
                break
        run = _trim(tokens[i:j])
        if run and len(run) <= 8:
            text = _tidy(sentence[run[0][1]:run[-1][2]])
            if text and not (len(run) == 1 and len(text) <= 1):
                spans.append(Span(text, "name", run[0][1]))
                # A long name often holds the answer as a part ("Kingdom of Bohemia" → "Bohemia").
                parts = _split_on_connectors(run)
                for part in parts if len(parts) > 1 else []:
                    spans.append(Span(sentence[part[0][1]:part[-1][2]].rstrip(".,"), "name", part[0][1]))
        i = max(j, i + 1)
    for m in _QUOTED.finditer(sentence):
        if any(c.isalpha() for c in m.group(1)):  # not the debris of markup: ", '2': "
            spans.append(Span(m.group(1).strip(" ,."), "name", m.start(1)))
    return spans


def question_names(question: str) -> list[Span]:
    """The names a question gives: its name spans, read with its first word in lower case ("Who", "Which" open a
    question; they name nothing)."""
    return name_spans(question[:1].lower() + question[1:])


def _adjacent(sentence: str, before: tuple[str, int, int], after: tuple[str, int, int]) -> bool:
    """No token was left out between two tokens (a stamp's are): a name does not run across a dropped one."""
    return _STAMP.search(sentence, before[2], after[1]) is None


def _past_connectors(tokens: list[tuple[str, int, int]], j: int) -> int:
    """Up to two connectors continue a name when a capitalised word follows them ("Battle of the
    Rosebud"): the index after that word, else 0."""
    k = j
    while k < len(tokens) and k - j < 2 and (tokens[k][0] in NAME_CONNECTORS or tokens[k][0] in ("'", "’")):
        k += 1
    return k + 1 if j < k < len(tokens) and _is_cap(tokens[k][0]) else 0


def _model_number(tokens: list[tuple[str, int, int]], j: int) -> bool:
    """A bare number right after a capitalised word belongs to the name: "Volvo 850", "Big 12"."""
    word, start, _ = tokens[j]
    prev = tokens[j - 1][0]
    return word.isdigit() and len(word) <= 4 and start == tokens[j - 1][2] + 1 and _is_cap(prev) \
        and prev not in _NOT_NAMES and prev.lower() not in GENERIC_NAMES


def _tidy(text: str) -> str:
    """"José Fernández's" → "José Fernández"; "Ann Lee Ann Lee" (a page title run into its first
    sentence) → "Ann Lee"; no trailing full stop or comma."""
    text = re.sub(r"['’]s$", "", text.rstrip(".,"))
    words = text.split()
    half = len(words) // 2
    if len(words) % 2 == 0 and half and words[:half] == words[half:]:
        text = " ".join(words[:half])
    return text


def _trim(run: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Drop sentence openers, lone months/demonyms and connectors from both ends of a run."""
    def loose(word: str, front: bool) -> bool:
        return (front and word in _NOT_NAMES) or word.lower() in GENERIC_NAMES or word in NAME_CONNECTORS
    while run and loose(run[0][0], True):
        run = run[1:]
    while run and loose(run[-1][0], False):
        run = run[:-1]
    return run


def _split_on_connectors(run: list[tuple[str, int, int]]) -> list[list[tuple[str, int, int]]]:
    """The names inside a long name: split at connectors and after a possessive ("Babbage's Engine")."""
    parts: list[list[tuple[str, int, int]]] = [[]]
    for word, start, end in run:
        if word in NAME_CONNECTORS or word in ("'", "’"):
            parts.append([])
        elif word.endswith(("'s", "’s")):
            parts[-1].append((word[:-2], start, end - 2))
            parts.append([])
        else:
            parts[-1].append((word, start, end))
    return [p for p in parts if p and p[0][0] not in _NOT_NAMES]


def _is_cap(word: str) -> bool:
    return (word[:1].isupper() or word[:1].isdigit()) and any(c.isalpha() for c in word) or (
        word[:1].isupper() and len(word) > 1)


def _date_spans(sentence: str) -> list[Span]:
    spans: list[Span] = []
    taken: list[tuple[int, int]] = []
    for pattern in _DATE_PATTERNS:
        for m in pattern.finditer(sentence):
            spans.append(Span(m.group(), "date", m.start()))
            taken.append((m.start(), m.end()))
    spans += [Span(m.group().rstrip(".,"), "date", m.start()) for m in _YEARLESS.finditer(sentence)
              if not any(a < m.end() and m.start() < b for a, b in taken)]
    return spans


def _number_spans(sentence: str) -> list[Span]:
    spans: list[Span] = []
    for m in _NUMBER.finditer(sentence):
        text = m.group().strip()
        words = text.split()
        bare = _BARE_NUMBER.match(text)
        if bare:
            spans.append(Span(bare.group(), "number", m.start()))
        if len(words) > 1 and bare and bare.group() != text and words[-1] not in STOP_WORDS:
            spans.append(Span(text, "number", m.start()))
    spans += [Span(m.group(), "number", m.start()) for m in _NUMBER_WORD.finditer(sentence)]
    return spans


_LIST_GOES_ON = re.compile(r",? (?:and |or )?[A-Z0-9]")  # "A, B, C" / "A, B and C" is a list


def qualified_spans(names: list[Span], sentence: str) -> list[Span]:
    """A name with its qualifier after a comma, as one span: "Lee County, Mississippi", "Frank Fertitta, Jr."
    (the qualifier at most two words)."""
    by_start = {span.start: span for span in names}
    out: list[Span] = []
    for span in names:
        end = span.start + len(span.text)
        if sentence[end:end + 2] != ", " or (qualifier := by_start.get(end + 2)) is None:
            continue
        after = qualifier.start + len(qualifier.text)
        if len(qualifier.text.split()) <= 2 and not _LIST_GOES_ON.match(sentence, after):
            text = sentence[span.start:qualifier.start + len(qualifier.text)]
            out.append(Span(text, "name", span.start))
    return out


_LIST_JOINS = (", and ", " and ", ", ")


def list_spans(parts: list[Span], sentence: str) -> list[Span]:
    """A whole list of same-kind spans that ends with "and", as one span: "Spain, Mexico and France",
    "1898 and 1959" (questions such as "which two battles" are answered by the list)."""
    at = {span.start: span for span in sorted(parts, key=lambda s: -len(s.text))}  # the longest at each start
    inside = {end + len(j) for span in at.values() for end in [span.start + len(span.text)] for j in _LIST_JOINS
              if sentence.startswith(j, end)}
    out: list[Span] = []
    for first in sorted(at.values(), key=lambda s: s.start):
        if first.start in inside:
            continue  # only whole lists
        last_join, end = "", first.start + len(first.text)
        while not last_join.endswith("and "):  # "and" ends a list
            join = next((j for j in _LIST_JOINS if sentence.startswith(j, end) and end + len(j) in at), None)
            if join is None:
                break
            nxt = at[end + len(join)]
            last_join, end = join, nxt.start + len(nxt.text)
        if last_join.endswith("and "):
            out.append(Span(sentence[first.start:end], first.kind, first.start))
    return out


def bound_numbers(sentence: str, spans: list[Span]) -> list[tuple[int, int]]:
    """Where a number belongs to something else, as (start, end): the day of a day and month ("30" of "on 30 Aug"),
    a time of day ("10" and "15" of "10:15", "7:00 pm") and a model's number after its name ("10.5" of "the Anvil
    Foundry 10.5", "Brewzilla 35"; not after an adverb that opens the text: "Over 300 people", "Nearly 40 came")."""
    out = [(m.start(), m.end()) for pattern in (_DAY_MONTH, _CLOCK) for m in pattern.finditer(sentence)]
    for name in spans:
        if name.kind != "name":
            continue
        end, word = name.start + len(name.text), name.text.lower()
        inner = re.search(r" \d", name.text)  # "Brewzilla 35", "Big 12": the name holds its number
        if inner and not _counts_what_follows(sentence, end):
            out.append((name.start + inner.start() + 1, end))
        if " " not in word and (word in _QUANTIFIERS or word in STOP_WORDS or word.endswith("ly")
                                or name.text in _NOT_NAMES):
            continue
        # a model's number is short: "MPRN 7398210604" is an identifier the name labels, not a model
        m = re.match(r" (\d{1,4}(?:\.\d+)?)\b(?![.,]?\d|\s?(?:%|°))", sentence[end:])
        if m and not _counts_what_follows(sentence, end + m.end()):
            out.append((end + 1, end + m.end()))
    return out


def _counts_what_follows(sentence: str, end: int) -> bool:
    """A number followed by an ordinary word counts it ("in Venice 22 times"): no model's number."""
    m = re.match(r"\s+([a-z]+)", sentence[end:])
    return m is not None and m.group(1) not in STOP_WORDS


def time_spans(sentence: str) -> list[Span]:
    """Times of day: "18:45", "7:30 pm"."""
    return [Span(m.group() if re.search(r"\d|[ap]\.m\.$", m.group()[-4:]) else m.group().rstrip("."), "time",
                 m.start()) for m in _CLOCK.finditer(sentence)]


def code_spans(sentence: str) -> list[Span]:
    """Identifiers, codes, part numbers, hex, MAC and IP addresses (not plain numbers, not dates)."""
    dates = [(s.start, s.start + len(s.text)) for s in _date_spans(sentence)]
    return [Span(m.group(), "code", m.start()) for m in _CODE.finditer(sentence)
            if not any(a <= m.start() < b for a, b in dates)
            and not re.fullmatch(r"\d+(?:[.,]\d+)?(?:st|nd|rd|th|s)?", m.group())]


def quantity_spans(sentence: str) -> list[Span]:
    """Numbers with their unit or currency, as one span."""
    sizes = [m for m in _DIMENSIONS.finditer(sentence) if re.search("[×x]", m.group())]
    return [Span(m.group().strip(), "number", m.start()) for m in (*_QUANTITY.finditer(sentence), *sizes)]


# Where something is, when no name says it: "above the sink", "by the roller door", "in the tea tent".
_PLACE = re.compile(r"\b(?i:above|below|under|underneath|behind|beside|next to|near|by|in|on|at|inside|over|"
                    r"outside|opposite|left of|right of)\s+(?i:the|a|an|our|its|his|her|their)\s+"
                    r"(?:[a-z][a-z\-]*\s+){0,2}[a-z][a-z\-]*\b")


def place_spans(sentence: str) -> list[Span]:
    """Lower-case place phrases only: where a name follows ("on the Bahamian island of Great Exuma"), the name is
    the place, and a phrase ending on a function word ("in the middle of") is no place of its own."""
    out = []
    for m in _PLACE.finditer(sentence):
        words = m.group().split()
        while len(words) > 3 and words[-1] in STOP_WORDS:  # "in the tea tent for" → "in the tea tent"
            words.pop()
        text = " ".join(words)
        end = m.start() + len(text)
        if words[-1] in STOP_WORDS or re.match(r"\s+(?:of\s+)?[A-Z0-9]", sentence[end:end + 5]):
            continue
        out.append(Span(text, "place", m.start()))
    return out


def spans_of(sentence: str, lists: bool = False) -> list[Span]:
    """Every candidate span of a sentence, of every kind; `lists`: whole lists too (for a question that
    asks for several things)."""
    names, dates = name_spans(sentence), _date_spans(sentence)
    listed = [*list_spans(names, sentence), *list_spans(dates, sentence)] if lists else []
    return [*names, *qualified_spans(names, sentence), *dates, *_number_spans(sentence), *listed,
            *code_spans(sentence), *quantity_spans(sentence), *place_spans(sentence), *time_spans(sentence)]
