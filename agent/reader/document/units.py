"""A document's reading units, following its structure: sentences of prose, table rows with their header, list
items, "Key: value" lines, each with the heading it stands under.

Wikipedia paragraphs are one run of prose, and sentences are the right unit there. A person's notes are not: a
table row read into the sentence before it, or the paragraph after a table read into its last row, gives a
400-character "sentence" whose part names answer nothing. Here a pipe row (`| KMC X11-EL | 118 |`: how tables
come out of HTML, CSV and PDF files, tools/extract/tables.py) is one unit and knows its columns' names; a list
item or a short line with no closing punctuation (a heading) stands alone; lines hard-wrapped inside a sentence
(PDF text) are joined back. Every unit's text is verbatim from the source, so a quote of it is found there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

UnitKind = Literal["sentence", "row", "item", "field"]

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
# A full stop that ends an initial or a title does not end the sentence: "M. Night Shyamalan",
# "directed by F. Javier Gutiérrez", "Dr. Norman Borlaug", "Kitzmiller v. Dover" (split there, a name is lost in
# two halves).
_ABBREVIATION_END = re.compile(r"(?:^|[\s(\"'])(?:[A-Z]|Dr|Mr|Mrs|Ms|Mt|St|Jr|Sr|Prof|Gen|Col|Capt|Lt|Sgt|Rev|Gov|"
                               r"Sen|Rep|Hon|Fr|No|no|Nr|nr|Vol|Op|op|vs|v|ca|c|approx|incl|excl|e\.g|i\.e|cf|Fig|fig)\.$")
_ITEM = re.compile(r"^\s*(?:[-*•·]|\d{1,2}[.)])\s+\S")
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_UNDERLINE = re.compile(r"={3,}|-{3,}")  # a setext heading's underline (a line of "-" alone under prose)
_CONTINUED = re.compile(r"(?:,|&|\band)\s*$")  # a line that ends mid-list
# "Weekend workshop lead: Tomasz Wierzbicki": a key of one to four words, then its value.
_FIELD = re.compile(r"^(?:[-*•·]\s+)?([A-Z][\w/&'’()\-]*(?: [\w/&'’()\-]+){0,3}?)\s*:\s+(\S.*)$")
_NOT_KEY = frozenset({"is", "are", "was", "were", "they", "we", "it", "he", "she", "this", "that", "there"})
_CLOSED = re.compile(r"[.!?:;)\]\"'”’]$")
# A log line opens with its date (and time): "2024-04-20 13:50 TW ...", "30/08/2024 | 19:30 | ...". Each is one unit.
_STAMPED = re.compile(r"^\s*(?:\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4}|\d{1,2}\.\d{1,2}\.\d{4})\b")
MIN_CHARS = 12
MAX_CHARS = 400


@dataclass(frozen=True)
class Unit:
    text: str  # verbatim from the source
    kind: UnitKind = "sentence"
    header: tuple[str, ...] = ()  # a table row: its columns' names, in order
    heading: str = ""  # the heading it stands under ("" at the top of the document)
    key: str = ""  # a "Key: value" line: its key
    # A field of the document's front matter: the "Date: … / Where: … / Present: …" block above a note's first
    # section, which says who, when and where of the document and nothing itself.
    front: bool = False

    @property
    def cells(self) -> tuple[str, ...]:
        return row_cells(self.text) if self.kind == "row" else ()


def _is_pipe_row(line: str) -> bool:
    """`| a | b |`, or `a | b | c` (a text file's table: three or more cells)."""
    s = line.strip()
    return (s.startswith("|") and s.endswith("|") and s.count("|") >= 3) or s.count(" | ") >= 2


def row_cells(line: str) -> tuple[str, ...]:
    """The cells of a table row, `| a | b |` or `a | b | c`, stripped."""
    s = line.strip()
    if s.startswith("|") and s.endswith("|"):
        s = s[1:-1]
    return tuple(c.strip() for c in s.split("|"))


def _is_separator(line: str) -> bool:
    return all(re.fullmatch(r":?-{2,}:?", c) for c in row_cells(line))


def _heading_like(line: str, next_line: str) -> bool:
    """A short line with no closing punctuation before a line that starts a new sentence, table or item."""
    words = line.split()
    return (0 < len(words) <= 8 and len(line) <= 60 and not _CLOSED.search(line)
            and (not next_line or next_line[:1].isupper() or next_line[:1].isdigit() or next_line.startswith("|")
                 or _ITEM.match(next_line) is not None))


# A document's title line: fragments joined by middle dots ("Volunteer Handbook · Revision 3 · 03/2024"), or a title in
# capitals before a dash ("SPOKE & SPROCKET CO-OP -- WORKSHOP LOG 2024").
_MASTHEAD = re.compile(
    r"^[^·]+(?:\s·\s[^·]+){2,}$"  # fragments joined by middle dots
    r"|^[A-Z][A-Z&'’.\-]+\s+(?:[A-Z0-9&][A-Z0-9&'’.\-]*\s+)*[A-Z0-9][A-Z0-9&'’.\-]*\s+[-–—]{1,2}\s"  # CAPITALS -
)


def is_masthead(text: str) -> bool:
    """Whether a unit is its document's title line (who, what, when of the document), which says nothing itself."""
    return _MASTHEAD.match(text.strip()) is not None


def _field_line(line: str) -> bool:
    """`**Date:** Thursday 14 March 2024` or `Chair: Dorothy Akande`: a line that is one "Key: value" field."""
    m = _FIELD.match(line.replace("**", "").replace("__", ""))
    return m is not None and not _NOT_KEY & set(m.group(1).lower().split())


def read_units(text: str) -> list[Unit]:
    """The units of a document's text, in order."""
    return _with_front_matter(_read_units(text))


def _with_front_matter(units: list[Unit]) -> list[Unit]:
    """Mark the fields above a document's first section (a heading after the one its text opens under), when two or
    more stand there: a meeting note's Date/Where/Present block. A sheet of fields with no section after them is
    the document itself, not its front matter."""
    first = next((i for i, u in enumerate(units) if u.heading != units[0].heading), None)
    if first is None or sum(u.kind == "field" for u in units[:first]) < 2:
        return units
    return [replace(u, front=True) if i < first and u.kind == "field" else u for i, u in enumerate(units)]


def _read_units(text: str) -> list[Unit]:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    units: list[Unit] = []
    heading, header, pending = "", (), ()  # pending: a lone header line whose rows come later ("date | time | ...")
    prose: list[str] = []
    item = [False]  # the prose being gathered opened with a list marker
    field = [False]  # the prose being gathered is a "Key: value" field

    def flush() -> None:
        if prose:
            units.extend(_prose_units(" ".join(prose), heading, "item" if item[0] else "sentence"))
            prose.clear()
        item[0] = field[0] = False

    for i, raw in enumerate(lines):
        line = raw.strip()
        nxt = next((ln.strip() for ln in lines[i + 1:] if ln.strip()), "")
        if not line:
            flush()
            continue
        if _is_pipe_row(line):
            flush()
            if _is_separator(line):
                continue
            cells = row_cells(line)
            starts_block = not (i and _is_pipe_row(lines[i - 1].strip()))
            if starts_block or len(cells) != len(header):
                if len(cells) == len(pending) and _has_digits(cells):
                    header = pending  # rows under a header that stands apart
                else:
                    header = pending = cells  # the first row of a table names its columns
                    continue
            units.append(Unit(line, "row", header=header, heading=heading))
            continue
        header = ()
        if m := _MD_HEADING.match(line):
            flush()
            heading = m.group(1)
            continue
        if _UNDERLINE.fullmatch(line):  # a setext heading's underline (the line above it was taken as the heading)
            flush()
            continue
        if not prose and i + 1 < len(lines) and _UNDERLINE.fullmatch(lines[i + 1].strip()):
            heading = line  # "Minutes\n=======": the line above an underline is a heading
            continue
        if _STAMPED.match(line):
            flush()
            units.extend(_prose_units(line, heading, "sentence", whole=True))
            continue
        if _field_line(line) and (not prose or field[0] or _CLOSED.search(prose[-1])):
            # Each line of a "Key: value" block is its own field, though none ends with a full stop: read as one
            # run, "**Date:** … **Where:** … **Present:** …" would be a field keyed "Date" holding them all.
            flush()
            prose.append(line)
            field[0] = True
            # a value wrapped onto the next line continues it: a lower-case word, or after a comma ("Present: Ann
            # Lee (Chair), Bo Park,\nCal Moss")
            wrapped = i + 1 < len(lines) and lines[i + 1].strip() == nxt and _CONTINUED.search(line) is not None \
                and not _field_line(nxt) and not _ITEM.match(nxt) and not _is_pipe_row(nxt)
            if not nxt[:1].islower() and not wrapped:
                flush()
            continue
        if not prose and _heading_like(line, nxt):
            heading = line
            continue
        if _ITEM.match(line):
            flush()
            prose.append(line)
            item[0] = True
            if _CLOSED.search(line) or not nxt[:1].islower():
                flush()
            continue
        prose.append(line)
        if (_CLOSED.search(line) and not nxt[:1].islower()) or _ITEM.match(nxt) or _is_pipe_row(nxt):
            flush()
    flush()
    return units


def _has_digits(cells: tuple[str, ...]) -> bool:
    return any(any(ch.isdigit() for ch in c) for c in cells)


def _prose_units(paragraph: str, heading: str, kind: UnitKind = "sentence", *, whole: bool = False) -> list[Unit]:
    """The sentences of a paragraph (`whole`: the paragraph is one unit, as a log line is)."""
    out: list[Unit] = []
    text = " ".join(paragraph.split())
    for sent in [text] if whole else _joined_after_abbreviations(_SENTENCE_END.split(text)):
        sent = sent.strip()
        while len(sent) > MAX_CHARS:  # very long runs are cut so every option stays quotable
            cut = sent.rfind(" ", 0, MAX_CHARS)
            cut = cut if cut > MAX_CHARS // 2 else MAX_CHARS
            out.append(Unit(sent[:cut].strip(), kind, heading=heading))
            sent = sent[cut:].strip()
        if len(sent) >= MIN_CHARS:
            m = _FIELD.match(sent.replace("**", "").replace("__", ""))
            if m and not _NOT_KEY & set(m.group(1).lower().split()):
                out.append(Unit(sent, "field", heading=heading, key=m.group(1).strip()))
            else:
                out.append(Unit(sent, kind, heading=heading))
        kind = "sentence" if kind == "item" else kind  # an item's later sentences are plain sentences
    return out


def _joined_after_abbreviations(pieces: list[str]) -> list[str]:
    out: list[str] = []
    for piece in pieces:
        if out and _ABBREVIATION_END.search(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out
