"""What the run has read, as sentences to choose answers and bridge entities from.

Every source an executor fetched in full is kept in the state (`sources`); its text comes back from
the toolbox, which holds every page, document and file the run opened. Sentences are the unit: a
chosen answer cites the sentence it was taken from, which the citation check then finds in the source.
"""

from __future__ import annotations

from collections.abc import Callable

from .candidates import EvidenceSentence
from .evidence import split_sentences
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
        out += [EvidenceSentence(s, src["rank"], src["title"], src["hop"], src["url"], position=i)
                for i, s in enumerate(split_sentences(text))]
    return out
