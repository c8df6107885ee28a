"""Is a unit of evidence about the question? The check that makes "verified" mean what a reader takes it to mean.

A quote can stand in a real source and still say nothing about the question ("Elsewhere, notably in the U.S.A.,
more advanced designs ..." for "Who designed the Analytical Engine?"). Here a unit is read with what it stands
under (its source's title, its heading, a row's column names) and scored by how much of the question it covers:

    coverage(u) = Σ idf(t) over the question's words t that u covers  /  Σ idf(t) over all the question's words

with idf taken over the units the run read, so the words that single out the question's subject ("Analytical",
"lockring") weigh more than the ones every source has ("engine", "date"). When the question names something, one
of its names must be covered whole ("Analytical Engine": both words), or the unit is not about it at all; likewise
when it names a code ("the Model 1840 musket", "the 50-litre bag"), the unit's source or its chain's must write one.

A multi-hop answer's unit need not name the question's subject: "Aphra Behn … died 16 April 1689" answers "the
playwright who wrote The City Heiress". It is about the question through a chain: another unit covers the subject
and names something ("Aphra Behn") that this unit's text or title names too, and the two cover the question
together. The name they share is no name the question gives (that is no chain: the unit must be about the question
itself), nor a nationality or an ordinal, which many unrelated things share. `of` returns the better of the direct
reading and the best such chain, with the link.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..answers.anchors import ORDINAL, identifying_codes, writes_code
from ..document.evidence import EvidenceSentence
from ..document.text import normalise, without_disambiguation
from ..language.countries import DEMONYMS
from ..language.kinds import words_answered
from ..language.open_questions import framing_words, opening_stems
from ..language.phrasing import cased_like, direct_question
from ..language.spans import name_spans, question_names
from ..language.words import content_words, stem

# The question's own words of no use for finding what it is about.
_QUESTION_WORDS = frozenset({"what", "which", "who", "whom", "whose", "when", "where", "why", "how", "many", "much"})


@dataclass(frozen=True)
class QuestionWords:
    weights: dict[str, float]  # each content stem of the question with its idf over the evidence
    names: tuple[frozenset[str], ...]  # each name the question gives, as its stems: all must be covered


@dataclass(frozen=True)
class Relevance:
    score: float  # coverage of the question, 0..1 (0 when the question names something and none of it is covered)
    names_ok: bool  # one of the names the question gives is covered whole (directly or along the chain)
    link: EvidenceSentence | None = None  # the unit the chain goes through (None: the unit is read on its own)
    bridge: str = ""  # the name the two units share
    code_missed: bool = False  # the question names a code and neither the unit's source nor a chain's writes one


def _context(sent: EvidenceSentence) -> str:
    """A unit with what it stands under: its source's title, its heading and a row's column names."""
    return " ".join([sent.text, sent.title, sent.heading, *sent.header])


def unit_stems(sent: EvidenceSentence) -> set[str]:
    """The words a unit covers: its text, its source's title, its heading and a row's column names."""
    text = _context(sent).replace("_", " ")
    return {stem(w) for w in content_words(text)}


def question_words(question: str, units: Sequence[EvidenceSentence]) -> QuestionWords:
    named = [frozenset(stem(w) for w in content_words(s.text)) for s in question_names(question)]
    # an open question's "list", "pros", "uses": no quote needs to cover them (unless a name holds one: "the
    # Difference Engine")
    frame = framing_words(question) - set().union(*named)
    stems = [s for w in content_words(question) if w not in _QUESTION_WORDS and (s := stem(w)) not in frame]
    docs = [unit_stems(u) for u in units]
    n = len(docs)
    weights = {t: math.log(1.0 + (n + 1) / (1 + sum(t in d for d in docs))) for t in dict.fromkeys(stems)}
    groups = []
    for name in named:
        group = name & set(weights)
        if group and group not in groups:
            groups.append(group)
    return QuestionWords(weights, tuple(groups))


def coverage(words: QuestionWords, covered: set[str]) -> Relevance:
    total = sum(words.weights.values())
    if not total:
        return Relevance(0.0, True)
    share = sum(w for t, w in words.weights.items() if t in covered) / total
    names_ok = not words.names or any(group <= covered for group in words.names)
    return Relevance(share if names_ok else 0.0, names_ok)


# A title or address before a name: "Sir Sacheverell Sitwell" is named "Sacheverell Sitwell" elsewhere.
_HONORIFIC = re.compile(r"^(?:sir|dame|lord|lady|dr|mr|mrs|ms|saint|st|king|queen|prince|princess|president)\s+")


def _names(sent: EvidenceSentence) -> dict[str, str]:
    """The names a unit gives (its source's title among them), normalised, each with how it is written: also
    without an honorific, and a title's head before its comma ("Waterford, New York" is the page of "Waterford")."""
    found = {normalise(s.text): s.text for s in name_spans(sent.text) if len(s.text) > 2}
    if sent.title:
        title = without_disambiguation(sent.title)
        found.setdefault(normalise(title), title)
        head = title.split(",")[0].strip()
        if head != title and len(head) > 2:
            found.setdefault(normalise(head), head)
    for key, written in list(found.items()):
        bare = _HONORIFIC.sub("", key)
        if bare != key and " " in bare:  # "Sir Walter" alone is not a name to link on
            found.setdefault(bare, written)
    found.pop("", None)
    return found


def _cell_stems(sent: EvidenceSentence) -> set[str]:
    """The words of a row's own cells."""
    return {stem(w) for w in content_words(sent.text)}


def texts_about(question: str, texts: Sequence[str], least: float) -> list[str]:
    """The texts (recalled notes, say) that cover at least `least` of the question, one of its names among it."""
    question = direct_question(question)
    units = [EvidenceSentence(t, i) for i, t in enumerate(texts)]
    words = question_words(question, units)
    return [u.text for u in units if coverage(words, unit_stems(u)).score >= least]


class RelevanceReader:
    """The evidence of one question made ready for `of(unit)`: each unit's words and names read once."""

    def __init__(self, question: str, units: Sequence[EvidenceSentence]):
        self.units = list(units)
        question = cased_like(direct_question(question), (u.text for u in self.units))
        self.words = question_words(question, self.units)
        self._stems = [unit_stems(u) for u in self.units]
        self._names = [_names(u) for u in self.units]
        self._by_name: dict[str, list[int]] = {}
        for i, names in enumerate(self._names):
            for name in names:
                self._by_name.setdefault(name, []).append(i)
        self._index = {(u.url, u.text): i for i, u in enumerate(self.units)}
        self.codes = identifying_codes(question)
        # A chain goes through something the question does not name: linking by a name it gives ("Kenny G" for "…
        # along with Kenny G and the performer of Saxophonic") makes no chain, only the unit's own reading counts.
        self._asked_names = {normalise(s.text) for s in question_names(question)}
        # The sources that write a code the question names: a page's sentence need not restate its subject's year
        # ("It was designed by Luigi Segre" on the 1954 Plymouth Explorer's page).
        self._coded = {u.url for u in self.units if writes_code(self.codes, _context(u))} if self.codes else set()
        # A table row is about one thing, named in its cells; a row whose cells hold no word of the question (only its
        # column names and its page's title do) is about the question only through a chain to a unit that names
        # what is in those cells ("the loan telescope away for repair" is T03): the torque row of the crank bolts
        # does not answer a question about pedals because the table is the handbook's torque table.
        # Such a row, with the names its cells give: the only names it links by.
        self._anonymous = {i: {normalise(s.text) for s in name_spans(u.text)} for i, u in enumerate(self.units)
                           if u.kind == "row" and not _cell_stems(u) & set(self.words.weights)}

    def is_front_matter(self, url: str, text: str) -> bool:
        """Whether a quote is a field of its document's front matter ("**Present:** … + 6 members")."""
        i = self._index.get((url, text))
        return i is not None and self.units[i].front

    def of(self, url: str, text: str, title: str = "", answered: frozenset[str] = frozenset()) -> Relevance:
        """How much of the question a unit (by its source and text) covers, on its own or through one link. A quote
        that is no unit of the evidence (a finding's) is read with `title` as its context; `answered`: stems the
        answer taken from it covers by its kind ("12 psi" a pressure)."""
        i = self._index.get((url, text))
        unit = self.units[i] if i is not None else EvidenceSentence(text, 0, title, url=url)
        own = (self._stems[i] if i is not None else unit_stems(unit)) | answered
        anonymous = i in self._anonymous
        # the source writes a code the question names, if it names any (a quote that is no unit: it, with its title)
        coded = not self.codes or url in self._coded or (i is None and writes_code(self.codes, _context(unit)))
        best = Relevance(0.0, False, code_missed=not coded) if anonymous or not coded else coverage(self.words, own)
        if best.score >= 0.999:
            return best
        names = self._names[i] if i is not None else _names(unit)
        if anonymous:  # linked only by what its cells name, not by its page's title
            names = {k: v for k, v in names.items() if k in self._anonymous[i]}
        for name in names:
            if not self._links_by(name):
                continue
            for j in self._by_name.get(name, ()):
                if self.units[j].url == url or not (coded or self.units[j].url in self._coded):
                    continue
                joint = coverage(self.words, own | self._stems[j])
                if joint.score > best.score + 1e-9:
                    best = Relevance(joint.score, joint.names_ok, self.units[j], self._names[j][name])
        return best

    def _links_by(self, name: str) -> bool:
        """Whether two units naming `name` make a chain: not when the question names it itself, nor when it is a
        nationality ("Portuguese") or an ordinal ("6th"), which many unrelated things share."""
        return name not in self._asked_names and name not in DEMONYMS and not ORDINAL.fullmatch(name)

    def of_answer(self, text: str, url: str, quote: str) -> Relevance:
        """A candidate's relevance: its quote's (with the words its kind answers: "at what pressure" is covered by
        "12 psi", "what's the deadline" by a date), or, for the subject of its own source ("Ada Lovelace" on the page
        "Ada Lovelace", whose "She wrote the first published algorithm …" says what the question asks), the best
        of that source's units."""
        answered = frozenset(stem(w) for w in words_answered(text))
        best = self.of(url, quote, answered=answered)
        key = normalise(text)
        if not key or best.score >= 0.999:
            return best
        for unit in self.units:
            if unit.url == url and unit.text != quote and normalise(without_disambiguation(unit.title)) == key:
                other = self.of(url, unit.text, answered=answered)
                if other.score > best.score:
                    best = other
        return best

    def _opening_weight(self, unit: EvidenceSentence) -> float:
        """The weight of the question's words a unit's opening words hold (its title and heading not counted)."""
        opening = opening_stems(unit.text)
        return sum(w for t, w in self.words.weights.items() if t in opening)

    def closest(self, k: int = 3) -> list[tuple[EvidenceSentence, float]]:
        """The k units that cover the most of the question on their own, one per source: what came closest."""
        scores = [coverage(self.words, st).score for st in self._stems]
        # Of equal ones, the unit that says it itself, in its opening words, not through its page's title ("Members
        # get the first hour free" before the meeting's "Present: …" line on the page "… members' meeting"); then the
        # unit read first (a page's lead before its later sentences).
        said = [self._opening_weight(u) for u in self.units]
        out: list[tuple[EvidenceSentence, float]] = []
        for i in sorted(range(len(scores)), key=lambda i: (-scores[i], -said[i], i)):
            score = scores[i]
            if score <= 0 or any(u.url == self.units[i].url for u, _ in out):
                continue
            out.append((self.units[i], score))
            if len(out) == k:
                break
        return out
