"""The reader's unit of evidence: a sentence (or table row, item, field) of a source the run read, with where it
stands."""

from __future__ import annotations

from dataclasses import dataclass

from .units import UnitKind, read_units


@dataclass(frozen=True)
class EvidenceSentence:
    text: str
    source: int  # 0-based rank of its source (search order)
    title: str = ""
    hop: bool = False  # found by a follow-up search for a bridge entity
    url: str = ""  # the source it belongs to
    position: int = 0  # its index among its source's sentences (0: the lead, which defines the subject)
    # Where it stands in its document (units.py): a table row knows its columns' names, a "Key: value" line its
    # key, every unit the heading above it.
    kind: UnitKind = "sentence"
    header: tuple[str, ...] = ()
    heading: str = ""
    key: str = ""
    front: bool = False  # a field of the document's front matter (units.py)


def evidence_units(text: str, rank: int, title: str, url: str, hop: bool = False) -> list[EvidenceSentence]:
    """A document's reading units as evidence: each unit's text with where it stands (a row's columns, a field's key,
    its heading). The graph reads what it fetched this way, and so does the trainer's simulated search, so an
    adapter learns on the same units it answers from."""
    return [EvidenceSentence(u.text, rank, title, hop, url, position=i, kind=u.kind, header=u.header,
                             heading=u.heading, key=u.key, front=u.front)
            for i, u in enumerate(read_units(text))]
