"""A value's label and shape in a person's notes: a value labelled as another thing is no answer, a range or a size is
one value, and a date's year that the question also names does not make the date a repeat of the question."""

from __future__ import annotations

from deepresearch.agent.reader import RelevanceReader, answer_confidence, by_relevance, evidence_units
from deepresearch.agent.reader.answers.candidates import rank_candidates

CONTACT = """# Kozlowski Tax & Bookkeeping

## Contact

Phone: (570) 555-0131
Email: office@kozlowski-tax.example
Open: Monday to Friday, 8:30 to 5:00
"""

PLOTS = """# What you can put on your plot

| Plot type | Rent | Largest shed | Largest greenhouse |
|---|---|---|---|
| Full plot | £68 | 2.4 m × 1.8 m | 3.0 m × 2.4 m |
| Half plot | £38 | 1.8 m × 1.2 m | 2.4 m × 1.8 m |
"""


def best(question: str, text: str, title: str = "notes.md") -> tuple[str, float]:
    """The reader's best candidate for the question over one document, and its confidence."""
    units = evidence_units(text, 0, title, f"notes/{title}")
    reader = RelevanceReader(question, units)
    pool = by_relevance(rank_candidates(question, units, k=64), reader)
    top = pool[0]
    return top.text, answer_confidence(top, pool, reader.of_answer(top.text, top.url, top.quote).score)


def test_a_value_labelled_as_another_thing_the_notes_never_name_is_no_answer():
    # the notes give a phone number and never say "fax": the phone number is not the fax number
    text, confidence = best("What is the practice's fax number?", CONTACT)
    assert text == "(570) 555-0131" and confidence == 0.0
    # asked for what its label says, the same value is an answer
    text, confidence = best("What is the practice's phone number?", CONTACT)
    assert text == "(570) 555-0131" and confidence > 0.0


def test_a_label_with_other_words_is_no_objection_when_the_unit_names_what_is_asked():
    notes = CONTACT + "\nFax: (570) 555-0132, the same line as the phone in the evenings.\n"
    text, confidence = best("What is the practice's fax number?", notes)
    assert text == "(570) 555-0132" and confidence > 0.0


def test_a_size_is_answered_whole_not_by_the_number_it_starts_with():
    text, _ = best("If I only have a half plot, how large can my shed be?", PLOTS, "welcome-pack.md")
    assert text == "1.8 m × 1.2 m"


def test_a_date_in_the_year_the_question_names_is_no_repeat_of_the_question():
    note = "- Update 20/11/24 (FH): the show is now Sunday 22 June 2025, not Sat 14 June.\n"
    text, _ = best("What date is our 2025 summer show on now?", note, "2024-11-06_committee-meeting.md")
    assert text.endswith("22 June 2025")


def test_a_value_a_note_calls_replaced_is_no_answer_however_well_it_is_said():
    notes = ("# Greenhouse vent notes\n\n"
             "- Vent controller v1.4 opened the roof vent when the greenhouse read above 28 °C.\n"
             "- Changed on 2 June: vent temperature 28 °C -> 24 °C.\n")
    question = "At what temperature does the vent controller open the roof vent?"
    units = evidence_units(notes, 0, "vent-notes.md", "notes/vent-notes.md")
    reader = RelevanceReader(question, units)
    pool = by_relevance(rank_candidates(question, units, k=64), reader)
    stale = next(c for c in pool if c.text == "28 °C")
    assert stale.features["stale"] == 1.0
    assert answer_confidence(stale, pool, reader.of_answer(stale.text, stale.url, stale.quote).score) == 0.0
