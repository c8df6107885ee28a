"""Candidate questions of each kind, made lazily from a corpus's facts (the filters keep what they may).

    one_hop       a fact's own question (facts.py: tables.py, prose.py)
    two_hop       a fact about E asked of another document's description of E (chains.py)
    comparison    two facts with the same attribute, "Which …, A or B?" (chains.py)
    unanswerable  a fact of a held-out document: its source is not served, the gold answer is "not found"
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterator

from deepresearch.agent.reader import normalise
from deepresearch.evals.scoring.metrics import NOT_FOUND

from .chains import comparable_value, comparison_frame, describe, mentions
from .corpus import SynthCorpus, SynthDoc
from .facts import Fact
from .filters import Candidate, tidy
from .prose import plain_title, prose_facts
from .tables import field_facts, row_facts


def facts_of(doc: SynthDoc) -> list[Fact]:
    units = doc.units()
    return [*row_facts(doc, units), *field_facts(doc, units), *prose_facts(doc, units)]


class FactBook:
    """The facts of a corpus's documents, read once each, and where to find the facts about a subject."""

    def __init__(self, corpus: SynthCorpus, rng: random.Random):
        self.corpus, self.rng = corpus, rng
        self.scan: list[str] = []  # the served documents questions are made from
        self.held_out: set[str] = set()
        self._facts: dict[str, list[Fact]] = {}
        self.titles: dict[str, str] = {}
        self._subjects: dict[str, list[Fact]] | None = None

    def serve(self, scan: list[str], held_out: set[str]) -> None:
        """Questions come from `scan`; `held_out` documents are not served, so no answerable question uses them."""
        self.scan, self.held_out, self._subjects = scan, held_out, None
        # A page is about its title: a name leads to the page titled so ("Nevada"), else to the one page of that name
        # with a disambiguation ("Jaws" → "Jaws (film)"), never to one of several (the facts are read when needed).
        plain: dict[str, str] = {}
        senses: dict[str, dict[str, str]] = defaultdict(dict)
        for doc in self.corpus:
            key, full = normalise(plain_title(doc.title)), normalise(doc.title)
            pages = plain if full == key else senses[key]
            if key and (full not in pages or pages[full] in held_out):
                pages[full] = doc.id  # the first served document of the page, if any
        only = {key: next(iter(pages.values())) for key, pages in senses.items() if len(pages) == 1}
        self.titles = {key: doc_id for key, doc_id in {**only, **plain}.items() if doc_id not in held_out}

    def facts(self, doc_id: str) -> list[Fact]:
        if doc_id not in self._facts:
            doc = self.corpus.get(doc_id)
            self._facts[doc_id] = facts_of(doc) if doc is not None else []
        return self._facts[doc_id]

    def about(self, name: str, not_in: str) -> list[Fact]:
        """Facts of other (served) documents about `name`: their subject is it."""
        if self._subjects is None:
            self._subjects = defaultdict(list)
            for doc_id in self.scan:
                for fact in self.facts(doc_id):
                    self._subjects[subject_key(fact)].append(fact)
        key = normalise(name)
        found = [f for f in self._subjects.get(key, []) if f.doc_id != not_in]
        title_doc = self.titles.get(key)
        if title_doc is not None and title_doc != not_in:
            found += [f for f in self.facts(title_doc) if normalise(f.subject) == key and f not in found]
        return [f for f in found if f.doc_id not in self.held_out]


def subject_key(fact: Fact) -> str:
    """What a fact is filed under: its page's full title when it is about its page, so that pages of one name stay
    apart ("Nevada" and "Nevada (1944 film)"), else the name its sentence gives."""
    about_page = normalise(fact.subject) == normalise(plain_title(fact.title))
    return normalise(fact.title if about_page else fact.subject)


def interleaved(book: FactBook, doc_ids: list[str]) -> Iterator[Fact]:
    """The documents' facts, one document at a time in turn (so no document fills a quota alone)."""
    queues = []
    for doc_id in doc_ids:
        facts = list(book.facts(doc_id))
        book.rng.shuffle(facts)
        if facts:
            queues.append(facts)
    while queues:
        queues = [q for q in queues if q]
        for q in queues:
            yield q.pop()


def one_hop(book: FactBook) -> Iterator[Candidate]:
    for f in interleaved(book, book.scan):
        yield Candidate(kind="one_hop", question=tidy(f.question), answer=f.answer, answer_kind=f.kind,
                        gold_doc_ids=[f.doc_id], sources=[f.unit], template=f.template, frame=f.frame,
                        must_find=[(tidy(f.question), f.doc_id)])


def unanswerable(book: FactBook, held_out: list[str]) -> Iterator[Candidate]:
    for f in interleaved(book, held_out):
        yield Candidate(kind="unanswerable", question=tidy(f.question), answer=NOT_FOUND, answer_kind=f.kind,
                        sources=[f.unit], template=f.template, frame=f.frame,
                        must_find=[(tidy(f.question), f.doc_id)], held_out_answer=f.answer)


def two_hop(book: FactBook) -> Iterator[Candidate]:
    for doc_id in book.scan:
        doc = book.corpus.get(doc_id)
        if doc is None:
            continue
        used: set[str] = set()
        units = doc.units()
        for unit in units:
            for entity, start in mentions(unit, doc):
                if entity in used or normalise(entity) == normalise(plain_title(doc.title)):
                    continue
                targets = book.about(entity, not_in=doc.id)
                if not targets:
                    continue
                fact = book.rng.choice(targets)
                page = book.corpus.get(fact.doc_id)  # E's page: the fact's, else the one titled E
                if page is None or normalise(plain_title(page.title)) != normalise(entity):
                    page = book.corpus.get(book.titles.get(normalise(entity), ""))
                description = describe(entity, start, unit, doc, avoid=fact.unit, table=units, page=page)
                if description is None or normalise(description.names) in normalise(fact.unit) \
                        or normalise(entity) in normalise(description.text):
                    continue
                used.add(entity)
                question = tidy(fact.asking(description.text))
                yield Candidate(kind="two_hop", question=question, answer=fact.answer, answer_kind=fact.kind,
                                gold_doc_ids=[doc.id, fact.doc_id], sources=[unit.text, fact.unit],
                                template=f"{unit.kind}>{fact.template}", frame=fact.frame,
                                must_find=[(question, doc.id), (entity, fact.doc_id)])


def comparisons(book: FactBook) -> Iterator[Candidate]:
    groups: dict[tuple, list[tuple[Fact, tuple[str, float]]]] = defaultdict(list)
    for doc_id in book.scan:
        for f in book.facts(doc_id):
            value = comparable_value(f)
            if value is None:
                continue
            # A table's column compares within its table; a sentence's attribute across documents.
            if f.template in ("field", "lead"):
                continue  # one value of a note: nothing of its kind to compare it with
            where = (f.doc_id, f.where) if f.template == "row" else ()
            groups[(f.kind, f.attribute, f.template == "row", *where, value[0])].append((f, value))
    keys = sorted(groups, key=str)
    book.rng.shuffle(keys)
    pools = [groups[k] for k in keys if len(groups[k]) >= 2]
    for pool in pools:
        book.rng.shuffle(pool)
    while pools:
        pools = [p for p in pools if len(p) >= 2]
        for pool in pools:
            (a, va), (b, vb) = pool.pop(), pool.pop()
            made = _comparison(a, va[1], b, vb[1], book.rng)
            if made is not None:
                yield made


def _comparison(a: Fact, va: float, b: Fact, vb: float, rng: random.Random) -> Candidate | None:
    if va == vb or normalise(a.subject) == normalise(b.subject) or not a.subject or not b.subject:
        return None
    framed = comparison_frame(a, b)
    if framed is None:
        return None
    frame, smaller_wins = framed
    if rng.random() < 0.5:
        a, va, b, vb = b, vb, a, va
    winner = a if (va < vb) == smaller_wins else b
    question = tidy(frame.format(a=a.subject, b=b.subject))
    return Candidate(kind="comparison", question=question, answer=winner.subject, answer_kind="choice",
                     gold_doc_ids=list(dict.fromkeys([a.doc_id, b.doc_id])), sources=[a.unit, b.unit],
                     template=a.template, frame=frame, must_find=[(a.subject, a.doc_id), (b.subject, b.doc_id)],
                     options=[a.subject, b.subject])
