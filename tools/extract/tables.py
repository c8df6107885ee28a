"""Tables as text a reader can keep apart: one line per row, cells between pipes, the header row first.

Extracted naively, a table loses its shape (trafilatura puts each HTML cell on its own line; a CSV is a run of
commas), and its last row runs into the paragraph after it. As `| Part no. | Links |` / `| KMC X11-EL | 118 |`
lines, a row stays one unit that a quote can cite verbatim, and its header says what each cell is.
"""

from __future__ import annotations

import csv
import io
import re

_SPACES = re.compile(r"\s+")


def pipe_row(cells: list[str]) -> str:
    """`| a | b |`, each cell on one line with its pipes escaped away."""
    return "| " + " | ".join(_SPACES.sub(" ", c).replace("|", "/").strip() for c in cells) + " |"


def is_pipe_row(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith("|") and stripped.endswith("|") and stripped.count("|") >= 3


def pipe_cells(line: str) -> list[str]:
    """The cells of a `| a | b |` line (a markdown separator row `|---|---|` gives dashes)."""
    return [c.strip() for c in line.strip().strip("|").split("|")]


def is_separator_row(line: str) -> bool:
    return is_pipe_row(line) and all(re.fullmatch(r":?-{2,}:?", c) for c in pipe_cells(line))


def csv_to_text(raw: str) -> str:
    """A CSV file (comma, semicolon or tab) as pipe rows; the first row is taken as the header."""
    sample = raw[:4096]
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(sample, delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    rows = [r for r in csv.reader(io.StringIO(raw), dialect) if any(c.strip() for c in r)]
    return "\n".join(pipe_row(r) for r in rows)


def html_tables_as_rows(doc: object) -> None:
    """Replace every <table> of an lxml document by one <p> per row holding its pipe row (in place), so the
    text extraction keeps rows whole and apart from the paragraph that follows the table."""
    from lxml import etree

    for table in list(doc.iter("table")):  # type: ignore[attr-defined]
        if table.getparent() is None or any(a.tag == "table" for a in table.iterancestors()):
            continue  # nested tables are read as part of their outer table's cells
        rows = []
        for tr in table.iter("tr"):
            cells = [c.text_content() for c in tr if c.tag in ("td", "th")]
            if any(c.strip() for c in cells):
                rows.append(pipe_row(cells))
        block = etree.Element("div")
        for row in rows:
            etree.SubElement(block, "p").text = row
        block.tail = table.tail
        table.getparent().replace(table, block)


_GAP = re.compile(r"\S+(?: \S+)*")  # a cell: words with single spaces between; two or more spaces end it


def _cells(line: str) -> list[tuple[int, str]]:
    return [(m.start(), m.group()) for m in _GAP.finditer(line)]


def _aligned(header: list[tuple[int, str]], row: list[tuple[int, str]], slack: int = 3) -> bool:
    """Every cell of the row starts under one of the header's columns (a table, not justified prose)."""
    starts = [s for s, _ in header]
    return all(any(abs(s - h) <= slack for h in starts) for s, _ in row)


def layout_tables_as_rows(text: str, *, min_rows: int = 3) -> str:
    """Text laid out in columns (a PDF page read with its layout kept) with its tables as pipe rows.

    A table is a run of at least `min_rows` lines of two or more cells (cells end at two or more spaces) whose
    cells start under the first line's columns; single blank lines inside the run are allowed. Other lines lose
    their layout indentation and their runs of spaces."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        header = _cells(lines[i])
        rows, j = [lines[i]], i + 1
        while len(header) >= 2 and j < len(lines):
            if not lines[j].strip() and j + 1 < len(lines) and lines[j + 1].strip():
                j += 1  # a blank line inside the table
                continue
            row = _cells(lines[j])
            if len(row) < 2 or not _aligned(header, row):
                break
            rows.append(lines[j])
            j += 1
        if len(rows) >= min_rows:
            starts = [s for s, _ in header]
            for line in rows:
                cells = [""] * len(starts)
                for start, cell in _cells(line):
                    col = min(range(len(starts)), key=lambda c: abs(starts[c] - start))
                    cells[col] = f"{cells[col]} {cell}".strip()
                out.append(pipe_row(cells))
            i = j
            continue
        out.append(" ".join(lines[i].split()))
        i += 1
    return "\n".join(out)
