"""What kind of answer a question asks for, and whether a span is of that kind.

    date    when / what date / in what year                               "16 April 1689", "2024-04-02"
    time    what time / at what time                                      "18:45", "7:30 pm"
    number  how many / how much / what torque, price, weight, length ...  "118", "40 Nm", "€398.60"
    code    what part number, serial, frame number, MAC or I2C address    "CL555R", "0x5A"
    name    who, which, what else (the default); for "where" a place too  "Aphra Behn", "above the sink"

The measure and identifier words are ordinary English for quantities and identifiers, not one corpus's
vocabulary: a question about any document asks for a torque, a fee or a serial number in these words. The kind is read
past a clause that sets the question up ("When I'm running a group, what's the most children …" asks no date:
answer_form.without_setting).
"""

from __future__ import annotations

import re

from .answer_form import without_setting
from .countries import country_mentions
from .phrasing import direct_question
from .spans import CURRENCY, CURRENCY_CODES, AnswerKind, Span, name_spans, spans_of

ASKS_YEAR = re.compile(r"\b(what|which)\s+year\b", re.IGNORECASE)
_YEAR_Q = re.compile(r"\b(when|(what|which) ((two|three|four) )?years?|what decade|which decade|what century|"
                     r"(what|which) dates?|on what day|how long ago|birth ?date|date of (birth|death))\b"
                     # "what day did …", "what's the last day to …", "what's Colette's last day …", "which days will …"
                     r"|\b(what|which)(?:'s|’s|\s+is|\s+was|\s+are|\s+were)?\s+(?:the\s+)?(?:[\w'’-]+\s+){0,2}(?:days?|deadlines?)\b"
                     r"(?!\s+of\s+the\s+week)", re.IGNORECASE)
_NUMBER_Q = re.compile(r"\b(how many|how much|how long|how old|how tall|how far|how big|how large|what is the "
                       r"(population|number|amount|size|height|length|capacity|area|age|distance|seating))\b"
                       r"|\bpopulation\b|\bcapacity\b|\bpercentage\b|\bwhat (height|elevation|weight|"
                       r"altitude)\b|\b(average|median|annual|yearly) (income|salary|revenue)\b"
                       # readings without a unit: "what mash pH", "what original gravity", "what ratio"
                       r"|\b(what|which)\s+(?:[\w-]+\s+){0,2}(ph|gravity|ratio|score|rating)\b", re.IGNORECASE)
# A quantity named after what/which, as the head of its phrase (up to three words before it): "what torque does",
# "to what maximum pressure should", "what is the assembled weight of", "at what rain-plate wetness does".
_MEASURES = (r"torque|pressure|weight|mass|temperature|voltage|current|power|wattage|speed|velocity|price|cost|"
             r"fee|charge|rent|salary|length|width|height|depth|diameter|radius|thickness|volume|distance|"
             r"duration|elongation|threshold|percentage|wetness|humidity|aperture|resolution|frequency|"
             r"magnitude|dose|dosage|tolerance|clearance|size|yield|density|concentration|fare|wage|premium|"
             r"deposit|subscription")


def _named_measure(words: str) -> str:
    """"what (is the) [up to three words] <measure>" where the measure heads its phrase."""
    return (rf"\b(what|which)(?:['’]s)?\s+(?:(?:is|was|are|were)\s+)?(?:the\s+)?(?:[a-z][\w'’\-]*\s+){{0,3}}?"
            rf"(?:{words})s?(?=\s+(?:of|for|does|do|did|is|was|are|were|should|must|can|will|at|on|in|when|with|to|"
            rf"per|from|than)\b|\s*[?,]|\s*$)")


_MEASURE_Q = re.compile(rf"{_named_measure(_MEASURES)}|\bhow (heavy|wide|deep|high|fast|hot|cold|expensive)\b"
                        rf"|\bhow long\b(?! ago)", re.IGNORECASE)
# The measures that are money: "what's our fee for a rabies shot" is answered "$52.00", not "14%".
_MONEY_MEASURE_Q = re.compile(_named_measure(r"price|cost|fee|charge|rent|salary|fare|wage|premium|deposit|"
                                             r"subscription"), re.IGNORECASE)
# A number asked for by what one does with it: "what number should I ring" (a phone number).
_RING = r"number\s+(?:should|do|can|could|shall)\s+\w+\s+(?:ring|call|phone|dial|text)\b"
_CODE_Q = re.compile(r"\b((part|serial|frame|model|order|reference|registration|id|version|item|product|sail|phone|"
                     r"telephone|mobile|account|membership|policy|meter|customer|booking|invoice|licen[cs]e|vehicle|"
                     r"chassis|engine|hull|tracking|case|ticket) (number|no\.?|code)|sku|(mac|ip|i2c|hex|memory|bus|"
                     r"network|wi-?fi) address|identifier|firmware version|licen[cs]e plate|mmsi|iban|mprn|mpan|"
                     r"(?:meter point|booking|payment|customer|account|order|policy|supply|tracking) reference)\b"
                     # "what number should I ring", "the gas meter point reference"
                     r"|\b(?:what|which)\s+" + _RING +
                     # a number named by what it identifies: "the club's affiliation number", "which Portsmouth number"
                     r"|\b(?:what|which)(?:'s|’s|\s+is|\s+was)?\s+(?:the\s+)?(?:[\w'’-]+\s+){1,4}number\b(?!\s+(?:of|named|called)\b)"
                     r"|\b(?:what|which)(?:'s|’s|\s+is)?\s+(?:the\s+)?(?:[\w-]+\s+){0,3}reference\b(?!\s+(?:to|of|for)\b)"
                     # "what ID did the sensor get", "which DS18B20 address …": an address named by a model number
                     r"|\b(what|which)(?:'s|’s|\s+is|\s+was)?\s+(?:the\s+)?(?:[\w-]+\s+)?id\b|\b[a-z]*\d[\w-]*\s+"
                     r"address\b", re.IGNORECASE)
# An identifier whose format the question names has that format: a MAC address is six pairs of hex digits, an IP
# address four numbers, a phone number digits in groups. Another code beside it is some other identifier ("Net2",
# "iSpindel-01"), not the one asked for.
_FORMATS = (
    (re.compile(r"\bmac\s+address", re.IGNORECASE), re.compile(r"(?:[0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}")),
    (re.compile(r"\bip\s+address", re.IGNORECASE), re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")),
    (re.compile(r"\b(?:phone|telephone|mobile|cell|fax)\s+(?:number|no\b)|\b" + _RING, re.IGNORECASE),
     re.compile(r"[+(]?\d[\d ()\-.]{6,}\d")),
)


def asked_format(question: str) -> re.Pattern[str] | None:
    """The shape the answer must have when the question names an identifier's format (MAC, IP address, phone)."""
    return next((shape for asks, shape in _FORMATS if asks.search(question)), None)


# A code of digits alone ("the code is 8390") is a number to the spans: "what's the combination", "the gate code".
_DIGIT_CODE_Q = re.compile(r"\b(combination|pin(?: number| code)?|passcode|(?:door|gate|lock|padlock|alarm|access|"
                           r"entry|key ?safe) code)\b", re.IGNORECASE)
# "How warm did the fridge get", "how steep is the ramp": "how" and a word of degree before the verb ask for a quantity,
# whatever the adjective.
_DEGREE_Q = re.compile(r"\bhow\s+(?!(?:do|does|did|is|are|was|were|can|could|should|would|will|to|come|about|so|often|"
                       r"ever|else|well|many|much)\b)[a-z]+\s+(?:is|was|are|were|did|does|do|can|could|should|will|"
                       r"would|has|had|must)\b", re.IGNORECASE)
# Asked how much or how big, a quantity is answered with its unit when it has one ("6 tonnes", "23 L", "£1,200").
_UNIT_Q = re.compile(r"\bhow (much|big|large|small|heavy|long|far|tall|wide|deep)\b(?! ago)", re.IGNORECASE)
# "What city was the author of What We Talk About When We Talk About Love born in?" asks for a name: a
# title's words do not say what kind of answer the question wants.
_WHAT_THING = re.compile(r"^\s*(what|which)\s+(city|town|school|country|state|county|company|band|team|club|"
                         r"university|college|person|man|woman|actor|actress|film|book|album)\b", re.IGNORECASE)
_TIME_Q = re.compile(r"\b(?:what|which)\s+time\b(?!\s+(?:period|frame|zone|of\s+(?:year|day)))|\bwhat o['’]?clock\b",
                     re.IGNORECASE)
# An amount asked by its verb, "what" its object: "what are we paying for insurance", "what would a business be
# charged", "what did the hall pay for the urn".
_PAID_Q = re.compile(r"^\s*what\s+(?:would|will|do|does|did|are|is|was|were|should|must|can|could|have|has|had)\b"
                     r"[^?]*\b(?:charged|charge|charges|pay|paying|paid|cost|costs|spend|spent|owe|owed)\b",
                     re.IGNORECASE)
# "How much did Harbour Marine charge …", "how much money was in the bank": an amount of money, asked by "how much".
_HOW_MUCH_PAID_Q = re.compile(r"\bhow\s+much\b[^?]*\b(?:money|charged?|charges|cost|costs|pay|paying|paid|spend|spent|"
                              r"owe|owed|earn|earned|raised?|fees?|prices?)\b", re.IGNORECASE)
# A count asked by its bound: "what's the most guests we can have", "the maximum number of boats", "the largest number
# of kids I can take".
_BOUND_Q = re.compile(r"\b(?:most|fewest|maximum|minimum|max|min)\s+(?:number\s+of\s+)?(?:[a-z]+s|people|children|men|"
                      r"women)\s+(?:we|you|they|i|can|could|allowed|permitted|that|who|at|in|on|for)\b"
                      r"|\b(?:maximum|minimum|largest|biggest|greatest|highest|smallest|lowest)\s+number\s+of\b",
                      re.IGNORECASE)
_NATIONALITY_Q = re.compile(r"\b(nationality|country of origin)\b", re.IGNORECASE)
_SEVERAL_Q = re.compile(r"\b(two|three|four|both)\b", re.IGNORECASE)
_DIGIT_ID = re.compile(r"(?!(?:1[5-9]|20)\d\d$)\d{4,}")
# "EUR 465" writes its currency before the number, as a code
_UNIT_OR_CURRENCY = re.compile(rf"[€£$¥%]|\d\s?[A-Za-z°]|\b(?:{CURRENCY_CODES})\s?\d")


def answer_kind(question: str) -> AnswerKind:
    """What the question asks for: a date or year, a time of day, a number, a code, or (the default) a name."""
    question = direct_question(question)
    question = without_setting(question)
    if _CODE_Q.search(question):
        return "code"
    if _DIGIT_CODE_Q.search(question) and not re.match(r"\s*(who|whom|where)\b", question, re.IGNORECASE):
        return "number"
    if _TIME_Q.search(question):
        return "time"
    if _NUMBER_Q.search(question) or _MEASURE_Q.search(_without_titles(question)) or _PAID_Q.search(question) \
            or _BOUND_Q.search(question) or _DEGREE_Q.search(question):
        return "number"
    if _YEAR_Q.search(_without_titles(question)) and not _WHAT_THING.search(question):
        return "date"
    return "name"


def asks_measure(question: str) -> bool:
    """A quantity with its unit ("what torque": "40 Nm"), not a count ("how many links": "118")."""
    return _MEASURE_Q.search(_without_titles(without_setting(question))) is not None


# "How many cats did we spay": a count of things, which no amount of money and no percentage answers ("$95.00", "10%"
# stand in rows about cats and members). "How many dollars / pounds …" counts money, and is left out.
_COUNT_Q = re.compile(r"\bhow\s+many\s+(?!(?:dollars|pounds|euros|cents|pence|percent|per\s*cent)\b)", re.IGNORECASE)


def asks_count(question: str) -> bool:
    """"How many cats …", "how many members": a count, answered by a number that is no amount of money or share."""
    return _COUNT_Q.search(without_setting(question)) is not None


_SHARE_AFTER = re.compile(r"\s?(?:%|per\s?cent\b|percent\b)", re.IGNORECASE)


def amount_or_share(text: str, span: Span) -> bool:
    """An amount of money or a percentage, or a number inside one ("10" of "10% off", "95" of "$95"): no count."""
    if CURRENCY.search(span.text) or "%" in span.text:
        return True
    before = text[max(0, span.start - 4):span.start]
    return _SHARE_AFTER.match(text, span.start + len(span.text)) is not None or CURRENCY.search(before) is not None


def asks_money(question: str) -> bool:
    """An amount of money, asked by its verb ("what did we pay for …", "what would a business be charged", "how much
    did they charge"), "how much money", or its name ("what's the fee for …")."""
    question = without_setting(question)
    return _PAID_Q.search(question) is not None or _HOW_MUCH_PAID_Q.search(question) is not None \
        or _MONEY_MEASURE_Q.search(_without_titles(question)) is not None


def prefers_unit(question: str) -> bool:
    """"How much wort", "how big was the delivery": a number with its unit or currency is the better answer, though a
    bare one is not ruled out (`asks_measure` rules it out)."""
    question = _without_titles(without_setting(question))
    return _UNIT_Q.search(question) is not None or _DEGREE_Q.search(question) is not None


def asks_nationality(question: str) -> bool:
    """"Of what nationality …?": answered with a demonym ("Dutch"), which is otherwise never a candidate
    (GENERIC_NAMES). "The same nationality as X" asks for something else that shares it. On the 11 such
    free-form train questions top-1 went 0 → 6; on all 1,103, top-1 136 → 142 and top-5 259 → 268."""
    return _NATIONALITY_Q.search(question) is not None and "same nationality" not in question.lower()


def asks_several(question: str) -> bool:
    """"Which two battles …?", "both": the answer may be a whole list ("1898 and 1959")."""
    return _SEVERAL_Q.search(question) is not None


def demonym_spans(sentence: str) -> list[Span]:
    return [Span(m.text, "name", m.start) for m in country_mentions(sentence) if m.demonym]


def _without_titles(question: str) -> str:
    """The question with its quoted titles and its names of two or more capitalised words (past its first word)
    blanked out."""
    question = re.sub(r"[\"“][^\"”]*[\"”]", " ", question)
    head, _, rest = question.partition(" ")
    for span in sorted(name_spans(rest), key=lambda s: -len(s.text)):
        if len(span.text.split()) > 1:
            rest = rest.replace(span.text, " ")
    return f"{head} {rest}"


_MONEY_LABEL = re.compile(rf"[€£$¥]|\b(?:{CURRENCY_CODES}|price|prices|cost|costs|fee|fees|rent|amount|paid|charge|"
                          r"total|subtotal|budget|actual)\b", re.IGNORECASE)


def money_label(label: str) -> bool:
    """A column or key that says its values are money ("Cost (£)", "unit_cost_eur", "Budget"): a bare number under
    it is an amount."""
    return bool(label) and _MONEY_LABEL.search(label.replace("_", " ")) is not None


def fits(span: Span, kind: AnswerKind, place: bool = False, measure: bool = False, money: bool = False) -> bool:
    """A span of the kind asked for (`place`: a "where" question, which a place phrase answers too; `measure`: a
    quantity, which only a number with its unit or currency answers; `money`: an amount, with its currency)."""
    if kind == "number" and money:
        return span.kind == "number" and CURRENCY.search(span.text) is not None
    if kind == "number" and measure:
        return span.kind == "number" and _UNIT_OR_CURRENCY.search(span.text) is not None
    # an identifier of digits alone ("7398210604", a sail number "45127"), not a year; a shorter one (a uniform's
    # "27") would let every small number in (userdocs-c's sail number question answered "4" in the graph)
    if kind == "code":
        return span.kind == "code" or (span.kind == "number" and _DIGIT_ID.fullmatch(span.text) is not None)
    if kind in ("date", "time", "number"):
        return span.kind == kind
    return (span.kind == "name" and not span.text[:1].isdigit()) or (place and span.kind == "place")


# A day without its year ranks this far below other dates, as far as a full date ranks above them: it answers where
# nothing fuller is written ("Friday 19 July" in a letter home), not beside "1–3 November 2024" (at 0 one pool train
# question's year lost to a bare day and userdocs lost "1–3 November 2024"; at 0.5 no pool train answer changed:
# dev/results/trust-threshold-kinds/).
YEARLESS = 0.5


def kind_bonus(span: Span, kind: AnswerKind, asks_year: bool = False, measure: bool = False,
               unit: bool = False) -> float:
    if span.kind == "category":  # asked "what type of …", a class phrase over the names beside it
        return 0.5
    if asks_year:  # "in what year" is answered "1689", not "16 April 1689"
        return 0.5 if re.fullmatch(r"\d{4}", span.text) else 0.0
    if kind == "date":  # "when" is answered with the fullest date the sentence gives: "16 April 1689", "2024-04-02"
        if re.search(r"\d{1,2}\b.*\d{4}|\d{4}-\d{2}-\d{2}|\d{4}\b.*\d{1,2}", span.text):
            return 0.5
        # a day without its year ("Friday 19 July") where no fuller date answers
        return -YEARLESS if span.kind == "date" and not re.search(r"\d{4}|\d/\d{1,2}/\d{2}", span.text) else 0.0
    if kind == "name":
        return 0.2 * min(len(span.text.split()), 3) / 3  # a full name beats a lone word
    if kind == "number" and (measure or unit):  # "what torque" is answered "40 Nm", not "40"
        return 0.5 if _UNIT_OR_CURRENCY.search(span.text) else 0.0
    return 0.0


# What a span of each kind says by itself: "12 psi" is a pressure, "£45" a price, "29 September 2024" a date. An
# answer of that kind covers these words of its question ("at what pressure …", "what's the deadline …").
_UNIT_WORDS = (
    (CURRENCY, ("price", "cost", "fee", "rent", "pay", "paid", "charge", "spent",
                                                "spend", "amount", "money")),
    (re.compile(r"\d\s?(?:psi|bar|kPa|Pa)\b"), ("pressure",)),
    (re.compile(r"\d\s?(?:kg|g|mg|t|tonnes?|tons?|lbs?|oz)\b"), ("weight", "mass", "heavy", "weigh", "big", "much")),
    (re.compile(r"\d\s?(?:mm|cm|km|m|ft|in)\b"), ("length", "size", "height", "width", "depth", "distance", "long",
                                                 "tall", "wide", "deep", "far", "big", "large")),
    (re.compile(r"\d\s?°[CF]"), ("temperature", "hot", "cold", "warm")),
    (re.compile(r"\d\s?(?:ml|l|L|litres?|liters?)\b"), ("volume", "much", "capacity")),
    (re.compile(r"\d\s?(?:days?|weeks?|months?|hours?|hrs?|minutes?|mins?)\b"), ("duration", "long", "period")),
    (re.compile(r"\d\s?%"), ("percentage", "share", "rate", "threshold")),
    (re.compile(r"\d\s?(?:V|mV|kV)\b"), ("voltage",)),
    (re.compile(r"\d\s?(?:W|kW|kVA)\b"), ("power", "wattage")),
)
_DATE_WORDS = ("date", "day", "deadline", "year", "time")


def words_answered(answer: str) -> frozenset[str]:
    """The question words an answer span answers by its kind alone (to count as covered by the unit it stands in)."""
    if any(s.kind in ("date", "time") and s.text == answer.strip() for s in spans_of(answer)):
        return frozenset(_DATE_WORDS)
    return frozenset(w for pattern, words in _UNIT_WORDS if pattern.search(answer) for w in words)

