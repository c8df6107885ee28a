"""The reader's unit of evidence: a sentence (or table row, item, field) of a source the run read, with where it
stands."""

from __future__ import annotations

from dataclasses import dataclass

from .units import UnitKind


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
