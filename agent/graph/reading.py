"""What the run has read, as sentences to choose answers and bridge entities from.

Every source an executor fetched in full is kept in the state (`sources`); its text comes back from
the toolbox, which holds every page, document and file the run opened. Its reading units (sentences, table
rows, items, fields: agent/reader/document/units.py) are what answers are taken from: a chosen answer cites the unit it
came from, which the citation check then finds in the source.
"""

from __future__ import annotations

from collections.abc import Callable

from deepresearch.agent.reader import EvidenceSentence, evidence_units, normalise

from .state import SourceRead


def read_sentences(sources: list[SourceRead], source_text: Callable[[str], str | None]) -> list[EvidenceSentence]:
    """The sentences of every source read, once per source, tagged with its search rank and hop."""
    out: list[EvidenceSentence] = []
    seen: set[str] = set()
    for src in sorted(sources, key=lambda s: (s["hop"], s["rank"], s["step_id"])):
        if src["url"] in seen:
            continue
        seen.add(src["url"])
        text = source_text(src["url"])
        if not text:
            continue
        out += evidence_units(without_heading(text, src["title"]), src["rank"], src["title"], src["url"], src["hop"])
    return out


def without_heading(text: str, title: str) -> str:
    """A page's text without its first line when that line is the page's title.

    A fetched page's text opens with its heading on its own line ("Anthony Hopkins\nSir Philip Anthony
    Hopkins (born 31 December 1937) is ..."); joined into the first sentence, the heading runs into the
    lead's name and neither is a candidate ("Anthony Hopkins Sir Philip Anthony Hopkins"). The title is
    kept apart as each sentence's `title`. Pool train, free-form questions: gold among the candidates
    448 -> 476, top-1 136 -> 141 (scripts/fit_answer_ranker.py's evidence, read as pages).
    """
    head, newline, rest = text.partition("\n")
    return rest if newline and title and normalise(head) == normalise(title) else text
