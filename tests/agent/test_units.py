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


def test_each_line_of_a_key_value_block_is_its_own_field_and_the_block_above_the_first_section_is_front_matter():
    """None of the block's lines ends with a full stop; read as one run, "**Date:** … **Where:** … **Present:** …"
    was a single field keyed "Date" holding the attendance list, and a report quoted it as a pro of membership."""
    text = "\n".join([
        "# Spoke & Sprocket Co-op — members' meeting",
        "",
        "**Date:** Thursday 14 March 2024, 19:30",
        "**Where:** the workshop, Unit 4, Tanners Yard",
        "**Present:** Ines Barros (weekday workshop lead), Rui Castro + 6 members",
        "**Minutes:** Saoirse Flynn",
        "",
        "## 1. Membership fee",
        "- Annual membership fee agreed at **€25** (students €10).",
        "Chair: Dele Adeyemi",
    ])
    units = read_units(text)
    fields = [u for u in units if u.kind == "field"]
    assert [u.key for u in fields] == ["Date", "Where", "Present", "Minutes", "Chair"]
    assert fields[2].text == "**Present:** Ines Barros (weekday workshop lead), Rui Castro + 6 members"
    assert [u.front for u in fields] == [True, True, True, True, False]  # a field under a section is content
    assert not any(u.front for u in units if u.kind != "field")


def test_a_sheet_of_fields_is_the_document_not_its_front_matter():
    units = read_units("# Kettle spec\nCapacity: 23 L\nElement: 2.5 kW\nPump: magnetic, 6 W")
    assert [u.key for u in units] == ["Capacity", "Element", "Pump"] and not any(u.front for u in units)


def test_a_field_value_wrapped_onto_the_next_line_continues_it():
    units = read_units("Where: the workshop, Unit 4,\nin Tanners Yard\nWhen: Thursday 19:30")
    assert [u.text for u in units] == ["Where: the workshop, Unit 4, in Tanners Yard", "When: Thursday 19:30"]
