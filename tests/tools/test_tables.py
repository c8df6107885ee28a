"""Tables read as one line per row (cells between pipes, header first), from HTML, CSV and laid-out PDF text, and
kept apart from the paragraph after them."""

from __future__ import annotations

from pathlib import Path

import pytest
from deepresearch.tools.extract.files import read_user_file
from deepresearch.tools.extract.html import html_to_text
from deepresearch.tools.extract.tables import csv_to_text, is_pipe_row, is_separator_row, layout_tables_as_rows

USERDOCS = Path(__file__).resolve().parents[3] / "shared" / "data" / "userdocs" / "docs"


def test_an_html_table_becomes_rows_and_the_next_paragraph_stays_apart():
    page = """<html><head><title>Parts</title></head><body><article><h1>Parts</h1>
    <p>Member prices for the parts we keep on the shelves of the workshop.</p>
    <table><tr><th>Part no.</th><th>Links</th></tr><tr><td>KMC X11-EL</td><td>118</td></tr>
    <tr><td>KMC X11-93</td><td>116</td></tr></table>
    <p>Replace 11-speed chains at 0.5&nbsp;% elongation on the checker.</p></article></body></html>"""
    _, text = html_to_text(page)
    lines = text.splitlines()
    assert "| Part no. | Links |" in lines and "| KMC X11-EL | 118 |" in lines
    assert any(line.startswith("Replace 11-speed chains") for line in lines)  # its own line, not glued to a row


def test_csv_rows_with_any_common_delimiter():
    assert csv_to_text("sku,qty\nA-1,7\n\nB-2,\"3,5\"\n").splitlines() == ["| sku | qty |", "| A-1 | 7 |",
                                                                           "| B-2 | 3,5 |"]
    assert csv_to_text("a;b\n1;2\n").splitlines() == ["| a | b |", "| 1 | 2 |"]


def test_a_laid_out_table_and_prose_around_it():
    text = "\n".join([
        "  Always use a torque wrench on these.",
        " Fastener                       Torque      Wrench",
        " Stem faceplate bolts           5 Nm        TW-5.2",
        "",
        " Cassette lockring              40 Nm       TW-6.2",
        "Two  words  with gaps that do not line up is prose.",
    ])
    lines = layout_tables_as_rows(text).splitlines()
    assert lines[0] == "Always use a torque wrench on these."
    assert lines[1:4] == ["| Fastener | Torque | Wrench |", "| Stem faceplate bolts | 5 Nm | TW-5.2 |",
                          "| Cassette lockring | 40 Nm | TW-6.2 |"]
    assert lines[4] == "Two words with gaps that do not line up is prose."


def test_two_lines_of_columns_are_not_a_table():
    assert "|" not in layout_tables_as_rows("Name      Role\nAda       Chair\n")


def test_pipe_row_shapes():
    assert is_pipe_row("| a | b |") and not is_pipe_row("a | b") and not is_pipe_row("| a |")
    assert is_separator_row("|---|:--:|") and not is_separator_row("| a | b |")


@pytest.mark.skipif(not USERDOCS.is_dir(), reason="needs ../shared/data/userdocs")
@pytest.mark.parametrize(("name", "row"), [
    ("bike-coop/inventory.csv", "| SS-0010 | Disc pads resin | Shimano | B01S | 4 | 10 | 4.80 | B4 | 2024-05-20 |"),
    ("bike-coop/drivetrain-and-brake-parts.html",
     "| KMC X11-EL | chain, e-bike rated | 11 | 5.65 mm | 118 | €38.00 | C2 |"),
    ("bike-coop/volunteer-handbook.pdf", "| Cassette lockring | 40 Nm | TW-6.2 |"),
    ("astro-club/loan-telescopes.html",
     "| T03 | Sky-Watcher Skyliner 200P | 200 mm | 1200 mm | f/6 | Dobsonian | 24.5 kg | deep sky |"),
])
def test_user_files_keep_their_rows(name: str, row: str):
    _, text = read_user_file(USERDOCS / name, max_bytes=10_000_000)
    assert row in text.splitlines()
