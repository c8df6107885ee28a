"""Reading units follow a document's structure: table rows with their header, log lines, list items, "Key: value"
lines and headings, hard-wrapped lines joined back; plain prose is read into the same sentences as before."""

from __future__ import annotations

from deepresearch.agent.reader.document.units import read_units


def test_prose_is_sentences():
    text = "Aphra Behn was an English playwright. She died on 16 April 1689 in London. Dr. No was a film."
    assert [u.text for u in read_units(text)] == [
        "Aphra Behn was an English playwright.", "She died on 16 April 1689 in London.", "Dr. No was a film."]
    assert {u.kind for u in read_units(text)} == {"sentence"}


def test_a_case_name_is_not_cut_at_its_v():
    text = "The judge ruled on Kitzmiller v. Dover Area School District in 2005. It was a landmark case."
    first = read_units(text)[0].text
    assert first == "The judge ruled on Kitzmiller v. Dover Area School District in 2005."
    opus = "Rusalka, Op. 114, is an opera by Antonín Dvořák. It premiered in Prague."
    assert read_units(opus)[0].text == "Rusalka, Op. 114, is an opera by Antonín Dvořák."


def test_a_table_row_is_one_unit_with_its_header_and_the_paragraph_after_it_stands_apart():
    text = ("Chains\n| Part no. | Links |\n|---|---|\n| KMC X11-EL | 118 |\n| KMC X11-93 | 116 |\n"
            "Replace chains at 0.5 %.")
    units = read_units(text)
    rows = [u for u in units if u.kind == "row"]
    assert [u.text for u in rows] == ["| KMC X11-EL | 118 |", "| KMC X11-93 | 116 |"]
    assert rows[0].header == ("Part no.", "Links") and rows[0].cells == ("KMC X11-EL", "118")
    assert rows[0].heading == "Chains"
    assert units[-1].text == "Replace chains at 0.5 %." and units[-1].kind == "sentence"


def test_a_text_table_under_a_header_that_stands_apart():
    text = "date | time | observer | notes\nseeing: I (best) to V.\n\n12/08/2024 | 23:05 | FG | 47 meteors in 60 min.\n"
    row = [u for u in read_units(text) if u.kind == "row"]
    assert len(row) == 1 and row[0].header == ("date", "time", "observer", "notes")
    assert row[0].cells[3] == "47 meteors in 60 min."


def test_log_lines_fields_items_and_headings():
    text = "\n".join([
        "# Minutes",
        "## 1. Observatory",
        "- Sam: roof controller updated on 30 Aug.",
        "- Gearbox on the roof motor is still",
        "  noisy and needs a quote.",
        "Weekend workshop lead: Tomasz Wierzbicki (Saturday mornings).",
        "They are not interchangeable: the 5020 has the roller lever.",
        "2024-04-20 13:50 TW  CORRECTION to 2024-03-09: max is 8 bar. Reset to 8 bar.",
        "2. Opening times",
        "Tuesday and Thursday 17:00-20:00. Volunteers arrive 15 minutes",
        "before opening.",
    ])
    units = read_units(text)
    by_text = {u.text: u for u in units}
    assert by_text["- Sam: roof controller updated on 30 Aug."].kind == "field"
    assert by_text["- Gearbox on the roof motor is still noisy and needs a quote."].kind == "item"
    field = by_text["Weekend workshop lead: Tomasz Wierzbicki (Saturday mornings)."]
    assert field.kind == "field" and field.key == "Weekend workshop lead" and field.heading == "1. Observatory"
    assert by_text["They are not interchangeable: the 5020 has the roller lever."].kind == "sentence"
    assert "2024-04-20 13:50 TW CORRECTION to 2024-03-09: max is 8 bar. Reset to 8 bar." in by_text  # one unit
    assert by_text["Volunteers arrive 15 minutes before opening."].heading == "2. Opening times"
    assert "2. Opening times" not in by_text
