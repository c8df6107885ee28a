"""Facts of prose: a sentence's date, number or name asked for with the question word fronted and the auxiliary
inverted, so the question does not repeat the sentence's word order (filters.py caps what it may copy).

    He was elected to the Baseball Hall of Fame in 1964.   →  In what year was Tim Keefe elected to the Baseball
                                                               Hall of Fame?
    Acrassicauda is … a band formed in 2001.               →  (no: the verb does not follow its subject)
    The band's first album was released on March 9, 2010.  →  When was Acrassicauda's first album released?
    Back to the Future … film directed by Robert Zemeckis  →  (no: the same)
    Armin Shimerman (born November 5, 1949) is …           →  When was Armin Shimerman born?
    Pitch fee £12 per night, …                             →  How much is the pitch fee in Autumn star party?

Rules only, on the sentence's own words: the clause from the sentence's start (its subject, a pronoun read as
the page's title) to the answer must be subject, verb group (passive "was founded", active past "died", perfect
"has sold"), then at most a few words. Anything else gives no question rather than a garbled one.
"""

from __future__ import annotations

import re

from deepresearch.agent.reader import Unit

from .corpus import SynthDoc
from .facts import SUBJECT, Fact, context_of, is_kind, kind_fits, names_title, plain_title, unit_spans

TOKEN = re.compile(r"[\w'’.\-]+|[^\w\s]")
_AUX = frozenset({"was", "were", "is", "are"})
_HAVE = frozenset({"has", "have", "had"})
_ADVERBS = frozenset({"also", "later", "first", "originally", "officially", "then", "eventually", "formally", "again"})
_PREPS = frozenset({"in", "on", "at", "by", "for", "from", "to", "into", "with", "near", "during", "onto"})
_DATE_PREPS = frozenset({"in", "on", "at", "during"})
_PLACE_PREPS = frozenset({"in", "at", "from", "to", "into", "near"})
_APPROX = frozenset({"over", "about", "approximately", "nearly", "almost", "around", "some", "roughly", "than", "more",
                     "less", "up", "a", "total", "of"})
PRONOUNS = frozenset({"he", "she", "it", "they"})
_POSSESSIVES = frozenset({"his", "her", "its", "their"})
_NOT_VERBS = frozenset({"red", "bed", "need", "seed", "speed", "feed", "hundred", "united", "limited", "sacred",
                        "naked", "wicked", "kindred", "shed", "weed", "breed", "greed", "creed", "indeed", "based"})
# Irregular past tenses → the verb, and irregular participles → the past tense (for "Who wrote X?").
_PAST = {
    "won": "win", "began": "begin", "became": "become", "wrote": "write", "made": "make", "took": "take",
    "gave": "give", "left": "leave", "led": "lead", "met": "meet", "held": "hold", "built": "build",
    "sold": "sell", "bought": "buy", "found": "find", "ran": "run", "sang": "sing", "grew": "grow", "knew": "know",
    "saw": "see", "went": "go", "came": "come", "fell": "fall", "rose": "rise", "spent": "spend", "taught": "teach",
    "brought": "bring", "fought": "fight", "told": "tell", "drew": "draw", "chose": "choose", "lost": "lose",
    "paid": "pay", "sent": "send", "stood": "stand", "struck": "strike", "threw": "throw", "spoke": "speak",
    "underwent": "undergo", "kept": "keep", "shot": "shoot", "flew": "fly", "drove": "drive", "premiered": "premiere",
}
_PARTICIPLE_PAST = {
    "born": "", "built": "built", "written": "wrote", "made": "made", "taken": "took", "given": "gave",
    "held": "held", "led": "led", "known": "knew", "sold": "sold", "drawn": "drew", "driven": "drove",
    "chosen": "chose", "shown": "showed", "sung": "sang", "grown": "grew", "seen": "saw", "begun": "began",
    "done": "did", "found": "found", "won": "won", "set": "set", "lost": "lost", "paid": "paid", "sent": "sent",
    "brought": "brought", "fought": "fought", "taught": "taught", "told": "told", "kept": "kept", "left": "left",
    "met": "met", "spoken": "spoke", "bought": "bought", "cast": "cast", "run": "ran", "become": "became",
    "undertaken": "undertook", "beaten": "beat",
}
# -ed forms whose verb ends in a silent e ("released" → "release"): the stem's last letters say so.
_SILENT_E = re.compile(r"(?:[^aeiou]|^)[aeiou](?:[cgvzs]|t|k|p|b|d|m|n|r|l)$|[aeiou]{2}[scvz]$|[^aeo]at$|"
                       r"(?:[^aeiou][vcgz]|ur|rs|ns|ps|rg|rc|nc|ng|bl|pl|tl|dl|gl|kl|uc)$")
# Stems of that shape that take no e: "formed", "opened", "visited".
_NO_E = frozenset({"form", "open", "visit", "edit", "limit", "credit", "inherit", "exhibit", "debut", "list", "end",
                   "elect", "direct", "act", "head", "land", "sign", "turn", "earn", "sail", "join", "kill", "rank",
                   "perform", "return", "award", "appoint", "remain", "attend", "enter", "develop", "happen",
                   "order", "offer", "suffer", "gather", "murder", "consider", "cover", "discover",
                   "deliver", "answer", "poison", "reckon", "abandon", "pardon", "summon", "fasten", "listen",
                   "target", "budget", "market", "benefit", "orbit", "audit", "profit", "merit", "recruit", "rid"})
_PERSON_OBJECT = frozenset({"marry", "succeed", "defeat", "replace", "meet", "beat", "hire", "sign", "appoint", "elect",
                            "nominate", "coach", "manage", "employ", "interview", "kill"})
_YEAR = re.compile(r"^(?:1[0-9]|20)\d{2}$")
_COUNT = re.compile(r"^(?:\d{1,3}(?:,\d{3})+|\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                    r"thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty)$")
_CURRENCY = re.compile(r"[€£$¥₹]|\b(?:dollars?|euros?|pounds|yen|yuan|rupees?|francs?|pesos?|USD|EUR|GBP)\b")
# Passive verbs taking a name ("was named Best Actor"); what names no place ("written in Persian", "lost to E").
_COMPLEMENTED = frozenset({"named", "called", "renamed", "nicknamed", "dubbed", "titled", "entitled", "elected",
                           "appointed", "awarded", "given", "granted", "offered", "crowned", "voted", "made",
                           "declared", "proclaimed", "designated", "certified", "rated", "styled", "created", "chosen"})
_NOT_PLACES = frozenset({"written", "write", "dubbed", "dub", "translated", "translate", "sung", "sing", "spoken",
                         "speak", "included", "include", "involved", "involve", "specialized", "expressed", "lose to",
                         "married to", "dedicated to", "compared to", "attributed to", "recommended to", "credited to"})
_SUBORDINATORS = frozenset({"after", "before", "while", "when", "since", "until", "because", "although", "though",
                            "whereas", "unless", "if"})
_NOT_AGENTS = frozenset({"bordered", "surrounded", "bounded", "flanked", "crossed", "drained", "dominated", "known"})
MAX_COMPLEMENT = 7
MAX_SUBJECT = 7


def lemma(past: str) -> str:
    """The verb of a regular or common irregular past tense ("died" → "die", "formed" → "form")."""
    if past in _PAST:
        return _PAST[past]
    if past in ("died", "tied", "lied"):
        return past[:-1]
    if past.endswith("ied") and len(past) > 4:
        return past[:-3] + "y"
    base = past[:-2]
    if len(base) >= 3 and base[-1] == base[-2] and base[-1] in "bdgmnprt":
        return base[:-1]  # "planned" → "plan"
    if base in _NO_E or base.endswith("ee") or re.search(r"(?:[^i]er|our)$", base) \
            and not base.endswith(("interfer", "adher", "persever", "rever", "coher")):  # "garnered", "toured"
        return base
    if base.endswith("creat"):  # "created": the one common -eated verb with an e ("treated", "defeated" have none)
        return base + "e"
    return base + "e" if _SILENT_E.search(base) else base


def _is_participle(word: str) -> bool:
    w = word.lower()
    return w in _PARTICIPLE_PAST or (w.endswith("ed") and len(w) > 4 and w not in _NOT_VERBS)


def _is_past(word: str) -> bool:
    w = word.lower()
    return w in _PAST or (w.endswith("ed") and len(w) > 4 and w not in _NOT_VERBS)


_NOT_SUBJECTS = frozenset({"a", "an", "this", "these", "those", "both", "thus", "originally", "there", "such", "some",
                           "many", "most", "all", "each", "another", "other", "one", "after", "in", "on", "at", "by",
                           "during", "when", "while", "following", "however", "since", "as", "if", "although"})
_MODALS = frozenset({"can", "could", "may", "might", "must", "shall", "should", "will", "would", "be", "been"})
_CONNECTORS = frozenset({"of", "the", "de", "da", "del", "di", "du", "la", "le", "van", "von", "and", "&", "for", "in"})
_OBJECT_PRONOUNS = frozenset({"it", "him", "her", "them", "this", "that", "these", "those", "which", "who"})
_DETERMINERS = frozenset({"the", "a", "an", "his", "her", "its", "their"})
_FOLLOWERS = frozenset({"", ",", ".", ";", ":", ")", "(", "in", "on", "at", "for", "from", "to", "with", "by", "during",
                        "as", "after", "before", "until", "when", "where", "which", "who", "but", "while", "since",
                        "through", "under", "over", "near", "against", "—", "–"})
_SCALES = frozenset({"million", "billion", "thousand", "hundred", "trillion", "percent", "per", "days", "weeks",
                     "months", "years", "hours", "minutes", "seconds", "miles", "metres", "meters", "feet",
                     "kilometres", "kilometers", "acres", "hectares", "tonnes", "tons", "pounds", "dollars", "euros"})


def person_page(doc: SynthDoc) -> bool:
    """The page is about a person (so "he" and "she" are its subject): a life-date lead or a person's pronouns."""
    lead = doc.text[:300]
    if re.search(r"\((?:born\b|[^()]*\d{3,4}\s*[–—-]\s*[^()]*\d{3,4})", lead):
        return True
    words = re.findall(r"\b(?:he|his|him|she|her)\b", doc.text[:1500], re.IGNORECASE)
    return len(words) >= 2 and not any(ch.isdigit() for ch in doc.title)


def _subject(words: list[str], doc: SynthDoc) -> str | None:
    """The subject a question names: a pronoun, "the band", "its first album" read as the page's title."""
    title = plain_title(doc.title)
    if not words or len(words) > MAX_SUBJECT or any(not re.match(r"[\w'’.\-]", w) for w in words):
        return None
    lower = [w.lower() for w in words]
    if lower[0] in _NOT_SUBJECTS or _MODALS & set(lower):
        return None  # not a subject, or a verb group inside it ("the institution's roots can be")
    if len(words) == 1 and lower[0] in PRONOUNS:  # "it" of a page about another thing is not the page
        return title if title and (names_title(doc) if lower[0] in ("it", "they") else person_page(doc)) else None
    if lower[0] == "the" and len(words) > 1 and words[1].islower():  # "the album", "the band's first album"
        kind = re.sub(r"['’]s$", "", lower[1])
        if not title or not is_kind(kind, doc) or (len(words) > 2 and kind == lower[1]):
            return None  # another thing than the page's subject ("the album" of a band's page)
        return title if len(words) == 2 else f"{title}'s {' '.join(words[2:])}"
    if lower[0] in ("its", "their") and len(words) > 1 and title and names_title(doc):
        return f"{title}'s {' '.join(words[1:])}"
    if lower[0] in ("his", "her") and len(words) > 1 and title and person_page(doc):
        return f"{title}'s {' '.join(words[1:])}"
    if not words[0][:1].isupper() or not words[-1][:1].isupper() \
            or any(w[:1].islower() and w not in _CONNECTORS for w in words):
        return None  # a name: capitalised words and connectors only
    text = " ".join(words)
    if title and (title.lower() in text.lower() or text.lower() in title.lower()
                  and (len(words) == 1 or person_page(doc))):
        return title  # the title, or a part of it that names the page ("Keefe" of Tim Keefe), not another thing
    return text if len(words) > 1 else None  # one capitalised word alone may open any sentence ("Last edited")


def answer_stands_alone(text: str, answer: str, start: int, kind: str) -> bool:
    """The span is a whole answer: not followed by more of a name, a possessive, a list or a noun it modifies."""
    after = text[start + len(answer):]
    if re.match(r"['’]s\b|\s*(?:,|and\b|&)\s*[A-Z0-9]", after) or (kind == "name" and "," in answer):
        return False
    if kind == "name" and (re.search(r"(?:^|[\s.])[A-Z]\.?$", answer) or re.match(r"\s+in an? [A-Z]", after)):
        return False  # a name cut at an initial ("E.L" of "E.L. Doctorow") or before "in a Supporting Role"
    nxt = (TOKEN.findall(after) or [""])[0].lower()
    if kind == "number":
        words = answer.split()
        if len(words) > 1 and words[-1].isalpha() and words[-1].islower() and words[-1] not in _SCALES:
            return False
        return nxt in _FOLLOWERS or bool(re.fullmatch(r"[a-z]{3,}", nxt))
    return nxt in _FOLLOWERS


def joined(answer: str, start: int, spans: list[tuple[str, str, int, str]]) -> bool:
    """The name span joins two names with "in" or "at" ("Claude Cardinale in La Goulette", "Cushing Academy in
    Massachusetts"): a name and where it is, which answers only a "where"."""
    names = {(at, text) for text, kind, at, _ in spans if kind == "name"}
    starts = {at for at, _ in names}
    return any((start, answer[:m.start()]) in names and start + m.end() in starts
               for m in re.finditer(r" (?:in|at) (?:the )?", answer))


def whole_spans(spans: list[tuple[str, str, int, str]]) -> list[tuple[str, str, int, str]]:
    """The spans not inside a longer span of the same kind ("1642" inside "25 December 1642")."""
    out = []
    for span in spans:
        text, kind, start, _ = span
        end = start + len(text)
        inside = any(o is not span and o[1] == kind and o[2] <= start and o[2] + len(o[0]) >= end
                     and len(o[0]) > len(text) and ("," not in o[0] or kind != "name") for o in spans)
        if not inside:
            out.append(span)
    return out


def verb_group(words: list[str]) -> tuple[int, int, str, str, bool] | None:
    """Where the verb group is among the clause's words: (start, end, auxiliary for the question, verb, passive)."""
    lower = [w.lower() for w in words]
    for i, w in enumerate(lower):
        if i == 0:
            continue
        j = i + 1
        if w in _AUX:
            while j < len(words) and lower[j] in _ADVERBS:
                j += 1
            if j < len(words) and _is_participle(lower[j]):
                return i, j + 1, w, lower[j], True
            return None  # a copula ("is a 1985 film"): no verb to ask with
        if w in _HAVE:
            if j < len(words) and lower[j] == "been" and j + 1 < len(words) and _is_participle(lower[j + 1]):
                return i, j + 2, "were" if words[0].lower() == "they" else "was", lower[j + 1], True
            if j < len(words) and _is_participle(lower[j]):
                return i, j + 1, w, lower[j], False
            return None
        if w in _ADVERBS:
            continue
        if _is_past(w) and words[i][:1].islower():
            return i, i + 1, "did", lemma(w), False
        if i >= MAX_SUBJECT:
            return None  # no verb after a subject of a few words
    return None


def _life_fact(doc: SynthDoc, unit: Unit, answer: str, start: int) -> Fact | None:
    """"Name (born 5 November 1949)", "Name (1 January 1857 – 23 April 1933)": a birth or a death date."""
    m = re.match(r"^(?P<name>[^()]{2,80}?)\s*\((?P<inner>[^()]*)\)", unit.text)
    if m is None or not m.start("inner") <= start < m.end("inner"):
        return None
    name, inner = m.group("name").strip(), unit.text[m.start("inner"):start]
    words = re.findall(r"[\w'’.\-]+", name)
    if not words or len(words) > 8 or any(w[:1].islower() and w not in _CONNECTORS for w in words):
        return None  # not a name ("Tsai followed it with … (2003)")
    title = plain_title(doc.title)
    subject = title if title and set(title.lower().split()) & set(name.lower().split()) else name
    if not subject[:1].isupper() or len(subject.split()) > MAX_SUBJECT:
        return None
    if not re.search(r"\bborn\b", m.group("inner")) and not re.search(r"\b(?:he|she|his|her)\b", doc.text[:1500],
                                                                      re.IGNORECASE):
        return None  # "(1836–1871)" dates a railroad as well as a life: a person's page says "he" or "she"
    if re.search(r"[–—]|\s-\s", inner):
        verb, frame = "did die", "When did {s} die?"
    elif re.search(r"\bborn\b|\bb\.", inner) or not inner.strip() and re.search(r"[–—]|\s-\s", m.group("inner")):
        verb, frame = "was born", "When was {s} born?"
    else:
        return None
    if _YEAR.match(answer):
        frame = frame.replace("When did", "In what year did").replace("When was", "In what year was")
    return Fact(doc.id, doc.title, unit.text, answer, "date", subject, verb, frame, "life")


def _frame(kind: str, answer: str, aux: str, verb: str, passive: bool, rest: list[str], after: list[str]) -> str | None:
    """The question frame (SUBJECT open) for an answer of `kind` after `aux verb rest` (`after`: the words after it):
    the answer follows the verb directly or after a preposition (a determiner aside), and the question word fits
    what the verb and its preposition take, or the question would be about another phrase."""
    rest, article, approx = list(rest), "", []
    while rest and rest[-1].lower() in _DETERMINERS:
        article = rest.pop().lower()
    while kind == "number" and rest and rest[-1].lower() in _APPROX:
        approx.insert(0, rest.pop().lower())
    if approx[:1] == ["of"]:
        return None  # "composed of four divisions": the verb's own "of", not "a total of"
    prep = rest[-1].lower() if rest and rest[-1].lower() in _PREPS else ""
    body = rest[:-1] if prep else rest
    if body and not prep or len(body) > MAX_COMPLEMENT:
        return None
    if any((_is_past(w) and w.islower()) or w.lower() in _OBJECT_PRONOUNS | _SUBORDINATORS for w in body):
        return None  # another verb or clause between (the answer belongs to it), or an object we cannot name
    tail = " ".join([verb, *body]).strip()
    if kind == "date":
        if prep and prep not in _DATE_PREPS or not prep and body:
            return None
        word = "In what year" if _YEAR.match(answer) else "When"
        return f"{word} {aux} {SUBJECT} {tail}?"
    if kind == "name":
        if passive and prep == "by" and not body:
            past = _PARTICIPLE_PAST.get(verb, verb)
            return f"Who {past} {SUBJECT}?" if past and verb not in _NOT_AGENTS else None  # "bordered by" no agent
        if prep in _PLACE_PREPS:
            keep = f" {prep}" if prep in ("to", "from", "into") else ""
            if article in ("a", "an") or {verb, f"{verb} {prep}"} & _NOT_PLACES or keep and body:
                return None  # "in a Supporting Role", "written in Persian", "after an injury to": not a where
            return f"Where {aux} {SUBJECT} {tail}{keep}?"
        if not prep and aux == "did":
            who = "Who" if verb in _PERSON_OBJECT else "What"
            return f"{who} {aux} {SUBJECT} {tail}?"
        if prep in ("for", "with") or (not prep and passive and verb in _COMPLEMENTED):
            return f"What {aux} {SUBJECT} {tail}{f' {prep}' if prep else ''}?"
        return None  # "What was X born?": the verb takes no such answer
    if kind == "number":
        counted = _counted(after)
        if _COUNT.match(answer.lower()) and counted and not prep:
            return f"How many {counted} {aux} {SUBJECT} {tail}?"
        if _CURRENCY.search(answer) and not _YEAR.match(answer):
            return f"How much {aux} {SUBJECT} {tail}{f' {prep}' if prep else ''}?"
    return None  # "How much is X located? 33 metres": a measure is no sum of money


def _counted(after: list[str]) -> str:
    """What a count counts: the words after it up to their plural noun ("three studio albums"), else ""."""
    words = []
    for word in after[:4]:
        if not re.fullmatch(r"[a-z][a-z-]+|[A-Z]{2,}s", word) or word in _FOLLOWERS or word in _CONNECTORS:
            break
        words.append(word)
    nxt = after[len(words)] if len(words) < len(after) else ""
    if not words or words[0] in _SCALES or len(words) > 3 or nxt[:1].isupper():
        return ""  # a measure ("five years"), or a name goes on ("three consecutive World Cups")
    return " ".join(words) if re.search(r"[^s]s$", words[-1]) or words[-1] in ("people", "children") else ""


_LEAD_VERBS = frozenset({"stays", "is", "was", "at", "now", "set", "to", "remains", "of", "are", "were"})


def _lead_fact(doc: SynthDoc, unit: Unit, answer: str, kind: str, start: int) -> Fact | None:
    """Notes: "- Pitch fee £12 per night", "- Loan deposit stays at £50": a list item that names a thing, then its
    value."""
    if unit.kind != "item" or kind not in ("number", "date", "code"):
        return None
    words = TOKEN.findall(re.sub(r"^\s*(?:[-*•·]|\d{1,2}[.)])\s+", "", unit.text[:start]))
    noun = words[:next((i for i, w in enumerate(words) if w.lower() in _LEAD_VERBS), len(words))]
    if not 1 <= len(noun) <= 3 or not words[0][:1].isupper() or any(not re.fullmatch(r"[A-Za-z]+", w)
                                                                     or w.lower() == "and" for w in noun):
        return None
    if any(w.lower() not in _LEAD_VERBS for w in words[len(noun):]) or noun[0].lower() in _NOT_SUBJECTS:
        return None
    where = context_of(unit, doc)
    if not where:
        return None
    label = " ".join(noun).lower()
    frames = {"number": ["How much is the {label} in {s}?", "What is the {label} in {s}?"],
              "date": ["What date is the {label} in {s}?", "When is the {label} in {s}?"],
              "code": ["What is the {label} in {s}?"]}[kind]
    for frame in (f.replace("{label}", label) for f in frames):
        if kind_fits(frame.replace(SUBJECT, where), kind):
            return Fact(doc.id, doc.title, unit.text, answer, kind, where, label, frame, "lead")
    return None


def prose_facts(doc: SynthDoc, units: list[Unit]) -> list[Fact]:
    """The facts of a document's sentences and list items."""
    facts: list[Fact] = []
    for unit in units:
        if unit.kind not in ("sentence", "item"):
            continue
        seen: set[str] = set()
        spans = unit_spans(unit, doc)
        for answer, kind, start, _label in whole_spans(spans):
            if answer in seen or kind == "place" or len(answer) < 2:
                continue
            if not answer_stands_alone(unit.text, answer, start, kind):
                continue
            seen.add(answer)
            fact = (_life_fact(doc, unit, answer, start) if kind == "date" else None) \
                or _lead_fact(doc, unit, answer, kind, start) or _clause_fact(doc, unit, answer, kind, start)
            if fact is None or not kind_fits(fact.question, fact.kind) or answer.lower() in fact.subject.lower():
                continue
            if kind != "name" or fact.frame.startswith("Where") or not joined(answer, start, spans):
                facts.append(fact)
    return facts


def _clause_fact(doc: SynthDoc, unit: Unit, answer: str, kind: str, start: int) -> Fact | None:
    if kind == "code":
        return None
    words = TOKEN.findall(re.sub(r"^\s*(?:[-*•·]|\d{1,2}[.)])\s+", "", unit.text[:start]))
    if not words or any(w in ",;:()[]\"“”" for w in words):
        return None
    group = verb_group(words)
    if group is None:
        return None
    i, j, aux, verb, passive = group
    subject = _subject(words[:i], doc)
    if subject is None:
        return None
    after = TOKEN.findall(unit.text[start + len(answer):start + len(answer) + 80])
    if aux in ("were", "are") and subject == plain_title(doc.title):
        aux = "was" if aux == "were" else "is"
    frame = _frame(kind, answer, aux, verb, passive, words[j:], after)
    if frame is None:
        return None
    attribute = " ".join([aux, verb, *[w.lower() for w in words[j:] if w.lower() not in _PREPS | _DETERMINERS]][:4])
    return Fact(doc.id, doc.title, unit.text, answer, kind, subject, attribute, frame,
                "passive" if passive else "active")
