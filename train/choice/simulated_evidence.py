"""Evidence as the graph gathers it, without the graph: a fast stand-in for research runs on a QA set.

The question's own search (SOURCES results), then one hop: a search for the best-ranked bridge name of
that evidence (SOURCES more, new documents only). Searches run over an in-memory SQLite FTS5 index of
the corpus with the product index's query terms, so a thousand questions take seconds and no model
call. Used where the answer ranker is fitted or trained (`deepresearch build ranker`,
`deepresearch train choices`); the real graph's evidence differs where its planner's queries do.
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Collection
from pathlib import Path

from deepresearch.agent.reader import EvidenceSentence, answer_choices, bridge_options, evidence_units
from deepresearch.tools.index.query import fts_or_expression, query_terms

SOURCES = 4


def free_form_train_questions(questions: Path, seed: int, sources: Collection[str] | None = None) -> list[dict]:
    """The train split's free-form questions (not yes/no, not "A or B": those have no candidate spans to
    rank), of the given `source` datasets only (None: all), shuffled with `seed`."""
    with Path(questions).open() as lines:
        rows = [q for q in map(json.loads, lines)
                if q.get("split") == "train" and answer_choices(q["question"]) is None
                and (sources is None or q.get("source") in sources)]
    random.Random(seed).shuffle(rows)
    return rows


class SimulatedSearch:
    """The corpus in an in-memory FTS5 table, searched like the product's local index."""

    def __init__(self, corpus: Path, sources: int = SOURCES):
        self.sources = sources
        self.db = sqlite3.connect(":memory:")
        self.db.execute("create virtual table docs using fts5(id unindexed, title, text)")
        with Path(corpus).open() as lines:
            self.db.executemany("insert into docs values (?, ?, ?)",
                                ((d["id"], d["title"], d["text"]) for d in map(json.loads, lines)))

    def search(self, query: str) -> list[tuple[str, str, str]]:
        """(doc id, title, text) of the best `sources` matches."""
        terms = query_terms(query)
        if not terms:
            return []
        return self.db.execute("select id, title, text from docs where docs match ? order by bm25(docs) limit ?",
                               (fts_or_expression(terms), self.sources)).fetchall()

    @staticmethod
    def sentences(docs: list[tuple[str, str, str]]) -> list[EvidenceSentence]:
        """The reading units of a search's documents (the question's own: not a hop's), tagged with their rank:
        table rows with their columns, fields with their keys, as the graph reads them."""
        return [u for r, (doc_id, title, text) in enumerate(docs) for u in evidence_units(text, r, title, doc_id)]

    def evidence(self, question: str) -> tuple[list[EvidenceSentence], list[str]]:
        """The sentences of the question's search and of its bridge hop, and the bridge names."""
        docs = self.search(question)
        sents = self.sentences(docs)
        bridges = [c.text for c in bridge_options(question, sents, searched=(), offered=1)]
        seen = {d[0] for d in docs}
        for r, (doc_id, title, text) in enumerate(self.search(bridges[0]) if bridges else []):
            if doc_id not in seen:
                sents += evidence_units(text, r, title, doc_id, hop=True)
        return sents, bridges
