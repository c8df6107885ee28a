"""A small folder of a person's documents (notes with a table and fields, a CSV) and encyclopedia-like pages (a
play, its writer, its theatre, another dramatist), written for the synthesis tests."""

from __future__ import annotations

from pathlib import Path

DOCS = {
    "club/minutes.md": """# Riverside Chess Club – committee meeting

Tuesday 4 March 2025, 19:30, library back room

**Chair:** Helena Marsh

**Treasurer:** Omar Quist

## Boards on loan

| Board | Model | Status | With |
|---|---|---|---|
| B1 | Staunton Deluxe | on loan | Omar |
| B2 | Jaques Club | available | – |
| B3 | House of Staunton | repair | Helena |

- Annual fee £40 per member.
- Deposit stays at £15.
""",
    "club/boards.csv": """model,maker,weight_kg,bought,price_gbp
Staunton Deluxe,Drueke,2.4,2019-05-11,85.00
Jaques Club,Jaques of London,1.9,2021-09-02,120.00
House of Staunton,HoS,3.1,2016-03-20,240.00
Tournament Roll,DGT,0.6,2023-01-15,18.50
""",
    "plays/Aphra Behn.md": """# Aphra Behn

Aphra Behn (10 December 1640 – 16 April 1689) was an English playwright, poet and translator.
She was buried in Westminster Abbey. She was employed as a spy by King Charles II in 1666.
""",
    "plays/The Rover.md": """# The Rover

The Rover is a two-part play written by Aphra Behn. It was first performed in 1677 by the Duke's Company.
The play was revived many times in the eighteenth century.
""",
    "plays/Thomas Killigrew.md": """# Thomas Killigrew

Thomas Killigrew (7 February 1612 – 19 March 1683) was an English dramatist and theatre manager.
He was appointed Master of the Revels in 1673. He founded the King's Company in 1660.
""",
    "plays/Dorset Garden Theatre.md": """# Dorset Garden Theatre

The Dorset Garden Theatre was a playhouse in London. It was designed by Christopher Wren.
It was opened in 1671 by the Duke's Company. The theatre was demolished in 1709.
""",
    "plays/William Wycherley.md": """# William Wycherley

William Wycherley (28 May 1641 – 1 January 1716) was an English dramatist of the Restoration period.
He was educated at Queen's College, Oxford. His play The Country Wife was first staged in 1675.
""",
    "plays/The Country Wife.md": """# The Country Wife

The Country Wife is a Restoration comedy written by William Wycherley. It was first performed in 1675.
""",
}


def write_docs(folder: Path) -> Path:
    for name, text in DOCS.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder
